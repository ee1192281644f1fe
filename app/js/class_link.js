// ClassLink (app/page/class_link.py): the header's "Teach a class" button and the page's
// two hand-overs from the server: `student` is this browser's anonymous class id, kept in a
// cookie so a reload (or a replica lost behind the balancer) rejoins as the same student;
// `navigate` is an address the page should go to (/app?teach=new starts a class there).
// @script render
state.setCookie = function (id) {
  if (!/^[A-Za-z0-9_-]{16,40}$/.test(id)) return;
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = 'alab_student=' + id + '; Path=/; Max-Age=43200; SameSite=Lax' + secure;
};
if (data.student) state.setCookie(data.student);
teach_form.style.display = data.in_class ? 'none' : '';
if (data.navigate) window.location.assign(data.navigate);
// @script student
state.setCookie(data.student);
// @script navigate
if (data.navigate) window.location.assign(data.navigate);
// @script in_class
teach_form.style.display = data.in_class ? 'none' : '';
