// The dashboard's HTML: one escape function every value goes through, the page frame, and the headers
// every dashboard response carries. No script at all; the one style element is allowed by its hash.
import { createHash } from 'node:crypto';

/** Escapes text for an HTML text node or a double- or single-quoted attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** Markup built by the functions below; a plain string is text and is escaped on the way in. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** A template tag: interpolated values are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

const STYLE =
  'body{font:15px system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}' +
  'header{display:flex;justify-content:space-between;align-items:center;gap:1rem;border-bottom:1px solid #ccc}' +
  'table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}th,td{text-align:left;padding:.3rem .5rem;' +
  'border-bottom:1px solid #e3e3e3;vertical-align:top}dl{display:grid;grid-template-columns:max-content 1fr;' +
  'gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}code{font-size:.9em}.state{font-weight:700}' +
  'label{display:block;margin:.75rem 0 .25rem}input{font:inherit;width:100%;max-width:24rem;padding:.4rem}' +
  'button{font:inherit;padding:.3rem .9rem}.empty{color:#666}[role=alert]{color:#a00}';

/** Built whole so that no formatting of the page template can change the hashed text. */
const STYLE_ELEMENT = new Html(`<style>${STYLE}</style>`);

/** The CSP source that allows exactly the style element above. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/** The CSP of a page whose one style element is `style` (no script, no frames, forms post to itself). */
export function contentSecurityPolicy(styleHash: string): string {
  return [
    "default-src 'none'",
    `style-src ${styleHash}`,
    "img-src 'none'",
    "script-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const CONTENT_SECURITY_POLICY = contentSecurityPolicy(STYLE_HASH);

/** The headers of a server-rendered page (dashboard, /device) under the given CSP. */
export function pageSecurityHeaders(csp: string): Record<string, string> {
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    // Not no-referrer: under it a browser's form post says `Origin: null`, and a page reached through a
    // proxy the server cannot see (Host rewritten to loopback) would pass as its own (isSameOriginPost).
    'referrer-policy': 'same-origin',
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
  };
}

/** Sent with every dashboard response, pages, redirects and errors alike. */
export const SECURITY_HEADERS: Record<string, string> = pageSecurityHeaders(CONTENT_SECURITY_POLICY);

export function page(title: string, body: Html, header: Html = html``): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title} · gds</title>
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        ${STYLE_ELEMENT}
      </head>
      <body>
        ${header}
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `.markup;
}
