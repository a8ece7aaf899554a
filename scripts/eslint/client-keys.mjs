// ESLint rule `gerbang/client-keys`: a name a client chose never becomes a key of a plain object.
// A plain object inherits from Object.prototype, so writing `obj[name]` with name `__proto__`
// replaces its prototype (or, nested, pollutes Object.prototype for the whole process), and reading
// `obj.constructor` finds Object. Dictionaries are Maps or `dict()` (src/shared/dict.ts, no prototype).
// Reported, where the object's type is a dictionary (a string index signature, no named properties):
//   - an object literal made as one, empty or by spread or computed names (`const out:
//     Record<string, X> = {}`, also when returned), or a module's lookup table (`const UNITS:
//     Record<string, number> = {…}`), unless it is handed to `dict()`;
//   - a write or delete by a computed name (`out[name] = …`, `??=`, `+=`, `delete out[name]`) into
//     one that is not a `Dict` (the brand `dict()` gives its result);
//   - `Object.fromEntries`, whose result inherits from Object.prototype.
import ts from 'typescript';

const BRAND = 'nullPrototype';

function isDictionaryType(checker, type) {
  const parts = type.isUnion() ? type.types : [type];
  return parts.some((part) => {
    if (part.getFlags() & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) return false;
    const members = part.isIntersection() ? part.types : [part];
    const indexed = members.some((member) => checker.getIndexInfoOfType(member, ts.IndexKind.String) !== undefined);
    const named = checker.getPropertiesOfType(part).filter((p) => !p.getName().includes(BRAND));
    return indexed && named.length === 0;
  });
}

function isBranded(checker, type) {
  const parts = type.isUnion() ? type.types : [type];
  return parts.every(
    (part) =>
      part.getFlags() & (ts.TypeFlags.Undefined | ts.TypeFlags.Null) ||
      checker.getPropertiesOfType(part).some((p) => p.getName().includes(BRAND)),
  );
}

/** A key whose type is a string that is not one of a few literals the code chose. */
function isChosenByName(checker, type) {
  const parts = type.isUnion() ? type.types : [type];
  return parts.some((part) => part.getFlags() & (ts.TypeFlags.String | ts.TypeFlags.Any | ts.TypeFlags.TemplateLiteral));
}

export const clientKeys = {
  meta: {
    type: 'problem',
    messages: {
      literal: 'A dictionary keyed by names is made with dict() (src/shared/dict.ts) or a Map, not a plain object literal.',
      write: 'Write by a computed name into a Map or a Dict from dict(), not a plain object: `__proto__` would be its prototype.',
      fromEntries: 'Object.fromEntries makes a plain object: use dict(entries) (src/shared/dict.ts).',
    },
    schema: [],
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    if (!services?.program) return {};
    const checker = services.program.getTypeChecker();
    const typeOf = (node) => checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
    const inDictCall = (node) =>
      node.parent?.type === 'CallExpression' && node.parent.callee.type === 'Identifier' && node.parent.callee.name === 'dict';
    // A module's `const UNITS: Record<string, number> = { s: 1000 }`: looked up by names from outside,
    // where `UNITS['constructor']` would find Object.
    const isLookupTable = (node) => {
      const declarator = node.parent;
      const declaration = declarator?.parent;
      return (
        declarator?.type === 'VariableDeclarator' &&
        declarator.init === node &&
        declaration?.kind === 'const' &&
        (declaration.parent?.type === 'Program' || declaration.parent?.parent?.type === 'Program')
      );
    };
    // `Object.entries(x ?? {})`: an empty fallback whose own names are only listed, never looked up.
    const onlyListed = (node) => {
      const fallback = node.parent?.type === 'LogicalExpression' && node.parent.right === node ? node.parent : undefined;
      const call = fallback?.parent;
      return (
        node.properties.length === 0 &&
        call?.type === 'CallExpression' &&
        call.callee.type === 'MemberExpression' &&
        call.callee.object.type === 'Identifier' &&
        call.callee.object.name === 'Object' &&
        ['entries', 'keys', 'values'].includes(call.callee.property.name)
      );
    };
    const checkWrite = (target) => {
      if (target.type !== 'MemberExpression' || !target.computed) return;
      if (!isChosenByName(checker, typeOf(target.property))) return;
      const objectType = typeOf(target.object);
      if (isDictionaryType(checker, objectType) && !isBranded(checker, objectType)) context.report({ node: target, messageId: 'write' });
    };
    return {
      ObjectExpression(node) {
        // A literal with only fixed names is a table the code wrote; one made empty or by spreading
        // or computing names is filled with names from elsewhere.
        const filled = node.properties.length === 0 || node.properties.some((p) => p.type === 'SpreadElement' || p.computed);
        if (!(filled || isLookupTable(node)) || inDictCall(node) || onlyListed(node)) return;
        const contextual = checker.getContextualType(services.esTreeNodeToTSNodeMap.get(node));
        if (contextual && isDictionaryType(checker, contextual) && !isBranded(checker, contextual)) {
          context.report({ node, messageId: 'literal' });
        }
      },
      AssignmentExpression(node) {
        checkWrite(node.left);
      },
      UnaryExpression(node) {
        if (node.operator === 'delete') checkWrite(node.argument);
      },
      CallExpression(node) {
        const callee = node.callee;
        if (
          callee.type === 'MemberExpression' &&
          callee.object.type === 'Identifier' &&
          callee.object.name === 'Object' &&
          callee.property.type === 'Identifier' &&
          callee.property.name === 'fromEntries'
        ) {
          context.report({ node, messageId: 'fromEntries' });
        }
      },
    };
  },
};

export default { rules: { 'client-keys': clientKeys } };
