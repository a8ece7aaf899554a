"""Python's elasticsearch 7.17 client (Debian's python3-elasticsearch) against the logs service's
Elasticsearch-compatible API: the calls of test/e2e/elastic-clients.test.ts, answered as JSON on
stdout for the test to compare with what it expects. Arguments: node URL, user, password, marker."""
import json
import sys
import warnings

from elasticsearch import Elasticsearch, NotFoundError, ConflictError, helpers

node, user, password, marker = sys.argv[1:5]
es = Elasticsearch([node], http_auth=(user, password), max_retries=0)
index = f"clients-{marker}"
query = {"query_string": {"query": f'"{marker}"'}}
out = {}

# One document: index, create (409 again), get, mget, exists, count.
own = f"py-{marker}"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    out["index"] = es.index(index=index, id=own, body={"@timestamp": 1, "message": f"python{marker}", "n": -1}, refresh="true")["result"]
    try:
        es.create(index=index, id=own, body={"message": "again"})
        out["create_again"] = "stored"
    except ConflictError as error:
        out["create_again"] = error.status_code
    generated = es.index(index=index, body={"@timestamp": 2, "message": f"python{marker}", "n": -2})["_id"]
    out["get_generated"] = es.get(index=index, id=generated)["_source"]["n"]
    out["search_generated"] = [hit["_id"] for hit in es.search(index=index, body={"query": {"ids": {"values": [generated]}}})["hits"]["hits"]] == [generated]
    out["mget"] = [doc["found"] for doc in es.mget(index=index, body={"ids": [own, "nope"]})["docs"]]
    out["exists"] = [es.exists(index=index, id=own), es.exists(index=index, id="nope"), es.indices.exists(index=index)]
    try:
        es.get(index=index, id="nope")
        out["get_missing"] = "found"
    except NotFoundError as error:
        out["get_missing"] = error.status_code
    out["count"] = es.count(index=index, body={"query": query})["count"]

    # helpers.scan: a scroll to the end.
    ids = [hit["_id"] for hit in helpers.scan(es, index=index, query={"query": query}, size=1000)]
    out["scan"] = {"count": len(ids), "unique": len(set(ids))}

    # A point in time, sorted by time then _shard_doc, paged with search_after.
    pit = es.open_point_in_time(index=index, keep_alive="1m")["id"]
    seen, after, times = [], None, []
    while True:
        body = {"size": 5000, "pit": {"id": pit, "keep_alive": "1m"}, "sort": [{"@timestamp": "asc"}, {"_shard_doc": "asc"}], "query": query, "track_total_hits": False}
        if after is not None:
            body["search_after"] = after
        hits = es.search(body=body)["hits"]["hits"]
        if not hits:
            break
        seen += [hit["_id"] for hit in hits]
        times += [hit["sort"][0] for hit in hits]
        after = hits[-1]["sort"]
    out["pit"] = {"count": len(seen), "unique": len(set(seen)), "ordered": times == sorted(times)}
    out["pit_closed"] = es.close_point_in_time(body={"id": pit})["succeeded"]

    aggs = json.loads(sys.stdin.read())
    out["aggregations"] = es.search(index=index, body={"size": 0, "query": query, "aggs": aggs})["aggregations"]

print(json.dumps(out))
