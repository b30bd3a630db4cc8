// A dedicated worker: fetches the control on the origin, then the blocked host, and reports.
const settle = url => fetch(url, {mode: "no-cors", cache: "no-store"}).then(r => r.status, e => "failed");
Promise.all([settle("/ok/worker-{{k}}"), settle("{{blocked}}/worker-leak"), settle("{{blocked_name}}/worker-name-leak")])
  .then(results => postMessage(results));
