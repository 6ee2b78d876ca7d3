// Opens, closes and filters rows already on the page; it reads no data into markup.
(function () {
  var items = Array.prototype.slice.call(document.querySelectorAll('details.item'));
  var groups = Array.prototype.slice.call(document.querySelectorAll('details.group'));
  var box = document.getElementById('filter');
  var chips = Array.prototype.slice.call(document.querySelectorAll('[data-verdict-filter]'));
  var verdict = null;

  function apply() {
    var q = (box.value || '').trim().toLowerCase();
    items.forEach(function (el) {
      var text = !q || el.textContent.toLowerCase().indexOf(q) >= 0;
      var kind = verdict === null || el.getAttribute('data-verdict') === verdict;
      el.hidden = !(text && kind);
    });
    // A filter must show what it found, also inside a group that starts closed.
    groups.forEach(function (g) {
      if ((q || verdict !== null) && g.querySelector('details.item:not([hidden])')) { g.open = true; }
    });
  }

  box.addEventListener('input', apply);
  chips.forEach(function (chip) {
    chip.addEventListener('click', function () {
      var v = chip.getAttribute('data-verdict-filter');
      verdict = verdict === v ? null : v;
      chips.forEach(function (c) {
        c.setAttribute('aria-pressed', String(c.getAttribute('data-verdict-filter') === verdict));
      });
      apply();
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll('[data-toggle]'), function (button) {
    button.addEventListener('click', function () {
      var open = button.getAttribute('data-toggle') === 'open';
      items.forEach(function (el) { if (!el.hidden) { el.open = open; } });
      if (open) { groups.forEach(function (g) { g.open = true; }); }
    });
  });

  // A link to #i-<n> opens that row.
  function openTarget() {
    var el = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (el && el.tagName === 'DETAILS') {
      el.open = true;
      var group = el.parentElement ? el.parentElement.closest('details.group') : null;
      if (group) { group.open = true; }
      el.scrollIntoView();
    }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
}());
