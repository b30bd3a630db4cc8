// A service worker: on install it fetches the control on the origin and the blocked host.
const settle = url => fetch(url, {mode: "no-cors", cache: "no-store"}).then(r => r.status, e => "failed");
self.addEventListener("install", event => {
  event.waitUntil(Promise.all([
    settle("/ok/sw-{{k}}"), settle("{{blocked}}/sw-leak"), settle("{{blocked_name}}/sw-name-leak"),
  ]));
  self.skipWaiting();
});
