// trainplate console: the few live parts, as progressive enhancement (every page works without).
// A toggle with data-shows="<id>" shows the element with that id only while it is checked.
document.addEventListener("DOMContentLoaded", () => {
  for (const toggle of document.querySelectorAll("[data-shows]")) {
    const target = document.getElementById(toggle.dataset.shows);
    if (!target) continue;
    const sync = () => { target.hidden = !toggle.checked; };
    toggle.addEventListener("change", sync);
    sync();
  }
});

// A region with data-poll="<url>" is replaced by what that URL answers every 1.5 s, until the
// answer has no data-poll of its own (the workload settled).
document.addEventListener("DOMContentLoaded", () => {
  const poll = async () => {
    const region = document.querySelector("[data-poll]");
    if (!region) return;
    try {
      const answer = await fetch(region.dataset.poll, { credentials: "same-origin" });
      if (answer.ok) region.outerHTML = await answer.text();
    } catch (_) { /* the next round tries again */ }
    setTimeout(poll, 1500);
  };
  setTimeout(poll, 1500);
});

// A form with data-name-check="<url>" says, next to its template name, whether the name is free
// in the chosen scope, asked of that URL once typing pauses (CONTINUE checks it again).
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form[data-name-check]");
  const name = document.getElementById("f-meta-name");
  const scope = document.getElementById("f-scope");
  const said = document.getElementById("f-meta-name-check");
  if (!form || !name || !scope || !said) return;
  let timer = null;
  let asked = 0;
  const check = async () => {
    const mine = ++asked;
    const query = new URLSearchParams({ scope: scope.value, name: name.value });
    try {
      const answer = await fetch(`${form.dataset.nameCheck}?${query}`, {
        credentials: "same-origin", headers: { accept: "application/json" },
      });
      const found = answer.ok ? await answer.json() : null;
      if (mine !== asked) return;  // a later keystroke asked again
      said.textContent = found ? found.message : "";
      said.className = `name-check${found && found.free === false ? " taken" : ""}`;
    } catch (_) {
      if (mine === asked) said.textContent = "";  // signed out, or not JSON: CONTINUE will tell
    }
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(check, 300); };
  name.addEventListener("input", later);
  scope.addEventListener("change", later);
});
