// What gds says back of a user's input: short, one line's worth, and nothing a terminal would act on.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  echoed,
  echoedDetails,
  echoedHost,
  echoedList,
  echoedPath,
  echoedUrl,
  quotedEcho,
  withPathEchoed,
} from '../../src/core/echo.js';
import { redactSecrets, startRunSecrets } from '../../src/core/redact.js';

// The secrets of a run another test file of this process left do not count here.
beforeEach(() => startRunSecrets([]));

describe('echoed', () => {
  it('keeps a short text as it is, and cuts a long one at 80 characters with …', () => {
    expect(echoed('t_42')).toBe('t_42');
    expect(echoed('a'.repeat(80))).toBe('a'.repeat(80));
    expect(echoed('a'.repeat(100_000))).toBe(`${'a'.repeat(79)}…`);
  });

  it('strips control characters first, and never splits a character of two UTF-16 units', () => {
    expect(echoed('\u001b]0;title\u0007name\u001b[31m')).toBe('name');
    const cut = echoed('😀'.repeat(100));
    expect(cut).toBe(`${'😀'.repeat(79)}…`);
    expect(echoed('😀'.repeat(80))).toBe('😀'.repeat(80));
  });
});

describe('echoed on more than one line', () => {
  it('writes line breaks and tabs as escapes, so a pasted file is said back on one line', () => {
    const pasted = Array.from({ length: 3_000 }, (_, i) => `line ${i}`).join('\n');
    const said = echoed(pasted);
    expect(said).not.toMatch(/[\n\r\t]/);
    expect(said).toMatch(/^line 0\\nline 1\\n/);
    expect(said.length).toBeLessThanOrEqual(80);
    expect(echoed('a\tb\r\n')).toBe('a\\tb\\n');
  });
});

describe('echoedPath', () => {
  it('keeps a short path, and cuts a long one at its start so that the file name stays', () => {
    expect(echoedPath('out.ndjson')).toBe('out.ndjson');
    const path = `/home/runner/work/${'deep/'.repeat(30)}exports/customers.ndjson.part`;
    const said = echoedPath(path);
    expect(said).toMatch(/^….*\/exports\/customers\.ndjson\.part$/);
    expect(Array.from(said)).toHaveLength(80);
    expect(echoedPath('😀'.repeat(100))).toBe(`…${'😀'.repeat(79)}`);
    expect(echoedPath('a\nb')).toBe('a\\nb');
  });
});

describe('withPathEchoed', () => {
  it("says back every mention of the path in a system's message as echoedPath does, and leaves the rest", () => {
    const path = `/tmp/${'x'.repeat(100_000)}/out.ndjson`;
    const said = withPathEchoed(`ENAMETOOLONG: name too long, open '${path}' (again: ${path})`, path);
    expect(said).toBe(`ENAMETOOLONG: name too long, open '${echoedPath(path)}' (again: ${echoedPath(path)})`);
    expect(withPathEchoed('EACCES: permission denied', 'out.ndjson')).toBe('EACCES: permission denied');
  });
});

describe('echoedUrl', () => {
  it('keeps a URL of up to 200 characters, and cuts a longer one at its end so that its scheme and host stay', () => {
    expect(echoedUrl('https://api.example.com/v1')).toBe('https://api.example.com/v1');
    const call = `https://governed-data.internal.example-corporation.com/production/api/tables/tbl_${'a'.repeat(24)}/gate-jobs?limit=5`;
    expect(echoedUrl(call)).toBe(call);
    const said = echoedUrl(`https://api.example.com/${'stage/'.repeat(1_000)}`);
    expect(said).toMatch(/^https:\/\/api\.example\.com\/stage\/.*…$/);
    expect(Array.from(said)).toHaveLength(200);
    expect(echoedUrl('https://api.example.com/a\u001b[2Jb\nc')).toBe('https://api.example.com/ab\\nc');
  });

  it('masks a password and a secret of the query before it cuts, so no part of either is shown', () => {
    const secret = 's3cr3t'.repeat(30);
    expect(echoedUrl(`https://api.example.com/x?token=${secret}&page=2`)).toBe(
      'https://api.example.com/x?token=****&page=2',
    );
    const said = echoedUrl(`https://bob:${secret}@api.example.com/${'a/'.repeat(100)}`);
    expect(said).toMatch(/^https:\/\/\*\*\*\*@api\.example\.com\/a\//);
    expect(said).not.toContain('s3cr3t');
  });
});

describe('echoedDetails', () => {
  it('cuts each string over 500 characters (a path at its start, a URL at its end), keeping the shape', () => {
    const path = `/home/runner/${'deep/'.repeat(200)}rows.ndjson`;
    const details = echoedDetails({
      tables: 'orders,'.repeat(7_000),
      file: path,
      url: `https://api.example.com/${'s/'.repeat(500)}?token=${'x'.repeat(40)}`,
      nested: [{ name: 'n'.repeat(1_000), message: 'm'.repeat(500), rows: 3 }, 'short', null, true],
    }) as Record<string, unknown>;
    expect(details).toEqual({
      tables: `${'orders,'.repeat(80).slice(0, 499)}…`,
      file: `…${path.slice(-499)}`,
      url: `https://api.example.com/${'s/'.repeat(500)}`.slice(0, 499) + '…',
      nested: [{ name: `${'n'.repeat(499)}…`, message: 'm'.repeat(500), rows: 3 }, 'short', null, true],
    });
  });

  it('keeps short strings as they are, control characters and line breaks included (JSON escapes them)', () => {
    const short = { message: 'a\nb\u001b[2J', count: 2, list: ['x'] };
    expect(echoedDetails(short)).toEqual(short);
    expect(echoedDetails(null)).toBeNull();
  });
});

describe('echoedDetails chooses the cut by the shape of the value, not by its key', () => {
  const url = `https://api.example.com/v1/${'stage/'.repeat(200)}?token=${'s3cr3t'.repeat(10)}&page=2`;
  const path = `/home/runner/${'deep/'.repeat(200)}rows.ndjson`;

  it('a URL under any key is masked and cut at its end, so that its scheme and host stay', () => {
    for (const key of ['location', 'reason', 'cause', 'url']) {
      const said = (echoedDetails({ [key]: url }) as Record<string, string>)[key] as string;
      expect(said, key).toMatch(/^https:\/\/api\.example\.com\/v1\/stage\/.*…$/);
      expect(said, key).toHaveLength(500);
      expect(said, key).not.toContain('s3cr3t');
    }
  });

  it('a path under a key a URL would have is cut at its start, so that its file name stays', () => {
    for (const key of ['url', 'location', 'base', 'reason']) {
      const said = (echoedDetails({ [key]: path }) as Record<string, string>)[key];
      expect(said, key).toBe(`…${path.slice(-499)}`);
    }
    expect(echoedDetails({ file: `exports/${'d/'.repeat(300)}rows.ndjson` })).toEqual({
      file: `…${`exports/${'d/'.repeat(300)}rows.ndjson`.slice(-499)}`,
    });
  });
});

describe('a URL of a long host said back', () => {
  const host = `${'very-long-subdomain-of-the-governed-data-service.'.repeat(3)}example.com`;

  it('keeps the host whole, and cuts the path and query instead', () => {
    expect(host.length).toBeGreaterThan(150);
    const url = `https://${host}/api/tables/${'t'.repeat(300)}?limit=5`;
    for (const said of [echoed(url), echoedUrl(url), JSON.parse(quotedEcho(url)) as string]) {
      expect(said).toMatch(new RegExp(`^https://${host.replaceAll('.', '\\.')}/api/tables/t*…$`));
      expect(Array.from(said).length).toBeLessThanOrEqual(200);
    }
    // A short host: the 80 characters of echoed as before.
    expect(echoed(`https://api.example.com/${'a'.repeat(200)}`)).toBe(
      `https://api.example.com/${'a'.repeat(55)}…`,
    );
  });

  it('keeps a host of 253 characters (the longest DNS name) whole, with its port, and cuts the path', () => {
    const longest = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(57), 'com'].join('.');
    expect(longest).toHaveLength(253);
    for (const origin of [`https://${longest}`, `https://${longest}:8443`]) {
      const url = `${origin}/api/tables/${'t'.repeat(300)}?limit=5`;
      for (const said of [echoed(url), echoedUrl(url), JSON.parse(quotedEcho(url)) as string]) {
        expect(said).toBe(`${origin}/…`);
      }
      // Nothing after the host: the URL as it is.
      expect(echoedUrl(origin)).toBe(origin);
    }
    expect(echoedHost(longest)).toBe(longest);
    expect(echoedHost(`${longest}:8443`)).toBe(`${longest}:8443`);
    // Over 253 it is no DNS name: cut at the limit as before.
    expect(Array.from(echoedHost('h'.repeat(300)))).toHaveLength(200);
  });

  it('a host over the whole limit is still cut, at the limit', () => {
    const huge = `https://${'h'.repeat(300)}.example.com/x`;
    expect(Array.from(echoedUrl(huge))).toHaveLength(200);
    expect(Array.from(echoed(huge))).toHaveLength(200);
  });
});

describe('a secret of the run in a text an echo cuts', () => {
  const secret = 'opaqueQwzrtyXvbnmKjhgfdsaPlmnb73';
  afterEach(() => startRunSecrets([]));
  /** Each start and end of the secret of 4 characters or more in `text`, once the output's own mask ran. */
  const fragments = (text: string) => {
    const shown = redactSecrets(text, [secret]);
    const found: string[] = [];
    for (let chars = 4; chars <= secret.length; chars++)
      for (const part of [secret.slice(0, chars), secret.slice(-chars)])
        if (shown.includes(part)) found.push(part);
    return found;
  };

  it('is masked before every cut: no start or end of it is left, whatever the cut leaves of it', () => {
    startRunSecrets([secret]);
    for (let kept = 1; kept < secret.length; kept++) {
      const before = 'a'.repeat(79 - kept);
      expect(fragments(echoed(`${before}${secret}${'b'.repeat(50)}`))).toEqual([]);
      expect(fragments(quotedEcho(`${before}${secret}${'b'.repeat(50)}`))).toEqual([]);
      expect(fragments(echoedPath(`/${'d/'.repeat(40)}${secret}${'e'.repeat(79 - kept)}`))).toEqual([]);
      const url = `https://api.example.com/${'p'.repeat(199 - 24 - kept)}${secret}/${'t/'.repeat(60)}`;
      expect(fragments(echoedUrl(url))).toEqual([]);
      const path = `/${'d'.repeat(400)}/${secret}${'e'.repeat(499 - kept)}`;
      expect(
        fragments(JSON.stringify(echoedDetails({ file: path, url, reason: `${url}${'x'.repeat(300)}` }))),
      ).toEqual([]);
      expect(fragments(withPathEchoed(`ENAMETOOLONG: open '${path}'`, path))).toEqual([]);
    }
  });

  it('a text short enough to be whole is left to the mask of the output', () => {
    startRunSecrets([secret]);
    expect(echoed(`id ${secret}`)).toBe(`id ${secret}`);
  });
});

describe('quotedEcho', () => {
  it('quotes as JSON does, cut as echoed cuts', () => {
    expect(quotedEcho('say "hi"')).toBe('"say \\"hi\\""');
    expect(quotedEcho('a'.repeat(1_000))).toBe(`"${'a'.repeat(79)}…"`);
  });
});

describe('echoedList', () => {
  it('names at most 10, then says how many more', () => {
    const names = Array.from({ length: 25 }, (_, i) => `n${i}`);
    expect(echoedList(names.slice(0, 3))).toBe('n0, n1, n2');
    expect(echoedList(names)).toBe('n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, … and 15 more');
  });
});
