// The backend's JSON API. Every call is same-origin, with the page's cookie; a failure
// is thrown as an ApiError carrying the server's code and message when it sent one.

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.kind = e.kind || 'http';
    this.code = e.code;
    this.data = e.data;
  }
}

async function answer(resp) {
  const type = resp.headers.get('content-type') || '';
  const body = type.startsWith('application/json') ? await resp.json() : { error: { message: (await resp.text()).slice(0, 500) } };
  if (!resp.ok) throw new ApiError(resp.status, body);
  return body;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export async function get(path, params) {
  return answer(await fetch(`/api/${path}${query(params)}`, { headers: { accept: 'application/json' } }));
}

export async function post(path, body) {
  return answer(await fetch(`/api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  }));
}

/** A POST whose answer is a file: its bytes as a Blob. */
export async function postForBlob(path, body) {
  const resp = await fetch(`/api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!resp.ok) await answer(resp);
  return resp.blob();
}
