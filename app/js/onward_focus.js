// The "On to step N" button under a lesson's verdict (app/views/lesson_panel.py), in the
// browser: the button hides as the next step opens, and its focus would fall back to the top of
// the page. Once the server has drawn the next step (its title changed), focus moves to that
// title, as a page that changes its content should: a screen reader reads the step from there,
// and Tab goes on to its prediction. `source` is the button.
function deepFirst(root, test) {
  for (const el of root.querySelectorAll('*')) {
    if (test(el)) return el;
    const inner = el.shadowRoot && deepFirst(el.shadowRoot, test);
    if (inner) return inner;
  }
  return null;
}
function lessonTitle() {
  const lesson = deepFirst(document, el => el.classList.contains('lab-lessons'));
  return lesson && deepFirst(lesson.shadowRoot || lesson, el => el.tagName === 'H2');
}
const before = lessonTitle();
const was = before ? before.textContent : '';
let tries = 0;
(function look() {
  const title = lessonTitle();
  if (title && title.textContent !== was) {
    title.tabIndex = -1;
    title.focus();
    title.scrollIntoView({block: 'nearest'});
  } else if (++tries < 100) {  // 10 s: a step with a model to load says so and waits there
    setTimeout(look, 100);
  }
})();
