import qrcode from 'qrcode-generator';
import { svg } from '../dom.js';

/**
 * A QR code drawn here, as SVG (no outside service sees the secret; no inline style, so the strict
 * CSP holds): one path of dark modules, four modules of quiet zone.
 */
export function qrSvg(text: string, label: string, size = 200): SVGSVGElement {
  const code = qrcode(0, 'M');
  code.addData(text);
  code.make();
  const count = code.getModuleCount();
  const margin = 4;
  let d = '';
  for (let row = 0; row < count; row++)
    for (let col = 0; col < count; col++) if (code.isDark(row, col)) d += `M${col + margin} ${row + margin}h1v1h-1z`;
  const side = count + 2 * margin;
  return svg(
    'svg',
    {
      viewBox: `0 0 ${side} ${side}`,
      width: size,
      height: size,
      role: 'img',
      'aria-label': label,
      id: 'totp-qr',
      'shape-rendering': 'crispEdges',
    },
    svg('rect', { width: side, height: side, fill: '#fff' }),
    svg('path', { d, fill: '#000' }),
  );
}
