// A shared worker: fetches the control, then the target, then imports a script from the target.
fetch("/ok/shared-worker-{{k}}", {cache: "no-store"})
  .then(() => fetch("{{T}}/shared-worker-fetch", {mode: "no-cors"}))
  .catch(() => {})
  .then(() => importScripts("{{T}}/shared-worker-import"));
