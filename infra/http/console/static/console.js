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
