// Admin pages: copy buttons, the upload progress poll, and the "only differences" filter.
// Reads JSON from this origin only and writes text, never markup.
(function () {
  Array.prototype.forEach.call(document.querySelectorAll('[data-copy]'), function (button) {
    button.addEventListener('click', function () {
      var box = document.getElementById(button.getAttribute('data-copy'));
      if (!box) { return; }
      box.select();
      var done = function () { button.textContent = '복사했습니다'; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(box.value).then(done, function () { document.execCommand('copy'); done(); });
      } else { document.execCommand('copy'); done(); }
    });
  });

  var only = document.querySelector('[data-only-differs]');
  if (only) {
    only.addEventListener('change', function () {
      Array.prototype.forEach.call(document.querySelectorAll('table.pairs tr.same'), function (tr) { tr.hidden = only.checked; });
    });
  }

  var progress = document.getElementById('progress');
  if (progress) {
    var stage = document.getElementById('stage');
    var bar = document.getElementById('bar');
    var steps = Array.prototype.slice.call(document.querySelectorAll('ol.stages li'));
    var poll = function () {
      fetch(progress.getAttribute('data-status'), {credentials: 'same-origin'}).then(function (r) { return r.json(); }).then(function (s) {
        if (s.state === 'done' && s.board) { location.assign(s.board); return; }
        if (s.state === 'error') { location.reload(); return; }
        stage.textContent = s.stage;
        steps.forEach(function (li, i) {
          var current = li.getAttribute('data-stage') === s.stage;
          li.className = current ? 'current' : '';
          if (current) { bar.value = i; }
        });
        setTimeout(poll, 400);
      }, function () { setTimeout(poll, 1500); });
    };
    setTimeout(poll, 300);
  }
}());
