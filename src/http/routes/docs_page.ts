/** The /docs page: plain HTML and a little script that renders the OpenAPI document. */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Business Messaging API v2</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2430;background:#fafbfc}
header{background:#0d5c4a;color:#fff;padding:18px 28px}
main{max-width:980px;margin:0 auto;padding:20px}
.op{background:#fff;border:1px solid #dde2e8;border-radius:8px;margin:14px 0;padding:12px 16px}
.m{display:inline-block;min-width:58px;font-weight:700;font-family:monospace;text-transform:uppercase}
.get{color:#1764c0}.post{color:#0b7a3b}.patch{color:#a15c00}.delete{color:#b3261e}
code,pre{font-family:ui-monospace,monospace;font-size:13px}
pre{background:#f3f5f7;padding:10px;border-radius:6px;overflow:auto;max-height:420px}
.scope{float:right;font-size:12px;background:#eef3f1;border-radius:10px;padding:2px 8px}
details summary{cursor:pointer;color:#444}
h2{margin-top:32px;border-bottom:1px solid #dde2e8}
</style>
</head>
<body>
<header><h1 style="margin:0;font-size:22px">Business Messaging API v2</h1>
<div>Base path <code>/api/v2</code> &middot; <a style="color:#cfe" href="/api/v2/openapi.json">openapi.json</a> &middot; send <code>Authorization: Bearer &lt;API key&gt;</code></div></header>
<main id="root">Loading&hellip;</main>
<script>
const root = document.getElementById("root");
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;","\\"":"&quot;"}[c]))}
function deref(doc, s){ if(s && s.$ref){ return deref(doc, s.$ref.split("/").slice(1).reduce((o,k)=>o[k],doc)); } return s; }
fetch("/api/v2/openapi.json").then(r=>r.json()).then(doc=>{
  const groups = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    const tag = (op.tags && op.tags[0]) || "Other"; (groups[tag] ||= []).push({path, method, op});
  }
  let html = "";
  for (const [tag, list] of Object.entries(groups)) {
    html += "<h2>" + esc(tag) + "</h2>";
    for (const {path, method, op} of list) {
      const scope = (op.security && op.security[0] && Object.values(op.security[0])[0][0]) || "";
      const body = op.requestBody && op.requestBody.content["application/json"];
      const ok = Object.entries(op.responses || {}).find(([s]) => s.startsWith("2"));
      const okSchema = ok && ok[1].content && ok[1].content["application/json"];
      const params = (op.parameters || []).map(p => "<code>" + esc(p.name) + "</code> (" + esc(p.in) + ")").join(", ");
      html += '<div class="op"><span class="scope">' + esc(scope) + '</span><span class="m ' + method + '">' + method + "</span> <code>" + esc(path) + "</code><div>" + esc(op.summary || "") + "</div>" +
        (params ? "<div>Parameters: " + params + "</div>" : "") +
        (body ? "<details><summary>Request body</summary><pre>" + esc(JSON.stringify(deref(doc, body.schema), null, 2)) + "</pre></details>" : "") +
        (okSchema ? "<details><summary>Response " + ok[0] + "</summary><pre>" + esc(JSON.stringify(deref(doc, okSchema.schema), null, 2)) + "</pre></details>" : "") + "</div>";
    }
  }
  root.innerHTML = html;
}).catch(e => { root.textContent = "Cannot load the OpenAPI document: " + e; });
</script>
</body>
</html>
`;
