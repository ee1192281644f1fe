// ClassLink (app/page/class_link.py): the header's "Teach a class" button and the page's
// hand-over from the server: `navigate` is an address the page should go to (/app?teach=new
// starts a class there; an approved second device fetches its teacher cookie). The student's
// anonymous class id is an HttpOnly cookie the server sets with the page: no script reads it.
// @script render
teach_form.style.display = data.in_class ? 'none' : '';
if (data.navigate) window.location.assign(data.navigate);
// @script navigate
if (data.navigate) window.location.assign(data.navigate);
// @script in_class
teach_form.style.display = data.in_class ? 'none' : '';
