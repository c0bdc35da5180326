// The verification page of RFC 8628 §3.3: a form for the user code, the e-mail of a seeded user (the
// reference server has no passwords) and approve / deny. Plain HTML, every value escaped (the dashboard's
// escapeHtml).
import { createHash } from 'node:crypto';
import { contentSecurityPolicy, escapeHtml, pageSecurityHeaders } from '../dashboard/html.js';

const STYLE =
  'body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}' +
  'label{display:block;margin:.75rem 0 .25rem}input{font:inherit;width:100%;padding:.4rem}' +
  'button{font:inherit;margin:1rem .5rem 0 0;padding:.4rem 1rem}.code{letter-spacing:.15em}';

/** The dashboard's headers, with a CSP that allows exactly this page's style element. */
export const VERIFICATION_PAGE_HEADERS = pageSecurityHeaders(
  contentSecurityPolicy(`'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`),
);

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head>` +
    `<body><h1>${escapeHtml(title)}</h1>${body}</body></html>\n`
  );
}

/** `askSecret`: the server is reachable beyond its machine and asks for its sign-in secret (never filled in). */
export function verificationForm(userCode: string, problem?: string, askSecret = false): string {
  const notice = problem === undefined ? '' : `<p role="alert">${escapeHtml(problem)}</p>`;
  return page(
    'Sign in to gds',
    `${notice}<p>Check that the code matches the one your terminal shows.</p>` +
      `<form method="post" action="/device">` +
      `<label for="user_code">Code</label>` +
      `<input id="user_code" name="user_code" class="code" required autocomplete="off" value="${escapeHtml(userCode)}">` +
      `<label for="email">E-mail</label>` +
      `<input id="email" name="email" type="email" required autocomplete="username">` +
      (askSecret
        ? `<label for="secret">Sign-in secret (printed by the server when it started)</label>` +
          `<input id="secret" name="secret" type="password" required autocomplete="off">`
        : '') +
      `<button name="action" value="approve">Approve</button>` +
      `<button name="action" value="deny">Deny</button></form>`,
  );
}

export function outcomePage(message: string): string {
  return page('gds sign-in', `<p>${escapeHtml(message)}</p>`);
}
