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

// A field with data-when="<select id>" and data-when-values='[...]' shows only while that select
// has one of those values (a variable's value, or its shared secret or ConfigMap, by its source;
// a URL's users or groups, by who may access it); hidden, it is disabled, so not sent.
document.addEventListener("DOMContentLoaded", () => {
  for (const field of document.querySelectorAll("[data-when]")) {
    const select = document.getElementById(field.dataset.when);
    if (!select || select.tagName !== "SELECT") continue;  // linked: read-only, all shown
    const values = JSON.parse(field.dataset.whenValues || "[]");
    const sync = () => {
      field.hidden = !values.includes(select.value);
      for (const control of field.querySelectorAll("input, select, textarea")) {
        control.disabled = field.hidden;
      }
    };
    select.addEventListener("change", sync);
    sync();
  }
});

// A select with data-refresh sends its form back when it changes (action=refresh), which comes
// back with what the choice offers: a new PVC data source's scope, its cluster's storage classes.
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-refresh]")) {
    select.addEventListener("change", () => {
      const action = document.createElement("input");
      Object.assign(action, { type: "hidden", name: "action", value: "refresh" });
      select.form.append(action);
      select.form.submit();
    });
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

// "Load from existing": a button with data-pane="<id>" opens that <dialog> as a side pane
// (showModal keeps focus inside it and closes it on Escape). Picking "Link" or "Use without
// linking" for an asset sets the form's own select and link-or-copy radios and sends the form as
// its load button does, so the server decides what is linked or copied exactly as without the
// pane. After that load, focus comes back to the button that opened the pane (data-refocus).
document.addEventListener("DOMContentLoaded", () => {
  for (const opener of document.querySelectorAll("button[data-pane]")) {
    const pane = document.getElementById(opener.dataset.pane);
    const form = opener.closest("form");
    if (!pane || !form || typeof pane.showModal !== "function") continue;
    opener.hidden = false;
    opener.addEventListener("click", () => {
      pane.showModal();
      const first = pane.querySelector("[data-asset]") || pane.querySelector(".pane-close");
      if (first) first.focus();
    });
    pane.addEventListener("close", () => opener.focus());
    pane.querySelector(".pane-close").addEventListener("click", () => pane.close());
    for (const pick of pane.querySelectorAll("[data-asset]")) {
      pick.addEventListener("click", () => {
        const select = document.getElementById(pane.dataset.select);
        const use = form.querySelector(
          `input[type=radio][name="${pane.dataset.use}"][value="${pick.dataset.useAs}"]`);
        const load = form.querySelector(`button[name=action][value="${pane.dataset.load}"]`);
        if (!select || !use || !load) return;
        select.value = pick.dataset.asset;
        use.checked = true;
        pane.close();
        form.requestSubmit(load);
      });
    }
    if (opener.hasAttribute("data-refocus")) opener.focus();
  }
});

// The framework select (data-frameworks-off: each framework's scopes whose cluster turns it off)
// disables a framework turned off for the chosen scope, says which are, and moves off one that
// was chosen; CONTINUE refuses such a framework all the same.
document.addEventListener("DOMContentLoaded", () => {
  const field = document.getElementById("framework-field");
  const scope = document.getElementById("f-scope");
  const framework = document.getElementById("f-spec-distributedFramework");
  const said = document.getElementById("f-spec-distributedFramework-off");
  if (!field || !scope || !framework || !said) return;
  const off = JSON.parse(field.dataset.frameworksOff || "{}");
  const sync = () => {
    const here = [];
    for (const option of framework.options) {
      option.disabled = (off[option.value] || []).includes(scope.value);
      if (option.disabled) here.push(option.value);
    }
    if (framework.selectedOptions[0] && framework.selectedOptions[0].disabled) {
      const allowed = [...framework.options].find((option) => !option.disabled);
      if (allowed) framework.value = allowed.value;
    }
    said.textContent = here.length
      ? `Turned off on this scope's cluster (General settings): ${here.join(", ")}` : "";
  };
  scope.addEventListener("change", sync);
  sync();
});
