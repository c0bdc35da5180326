// What a request whose body is sent byte for byte (not JSON, or over a limit) is answered: its status and
// error code. The refusals-first tests send such bodies to callers a route refuses.
export async function rawAnswer(
  url: string,
  method: string,
  token: string,
  body: string,
): Promise<{ status: number; code: string | undefined }> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  const parsed = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: parsed.error?.code };
}
