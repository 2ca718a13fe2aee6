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
