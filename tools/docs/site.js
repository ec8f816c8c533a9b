// The offline docs site's script (tools/build_docs.py copies it into the site as site.js): Pagefind's search box,
// a copy button on every code block, a link on every section heading, and the chapter list folded away on a narrow
// screen.
(() => {
  const root = new URL('.', document.currentScript.src).pathname;   // the site's folder, wherever it is served
  const search = document.getElementById('search');
  if (search && location.protocol === 'file:')   // Pagefind fetches its index, which a page opened from a file cannot
    search.textContent = 'Search works on the served site: python -m http.server -d _site';
  else if (search && window.PagefindUI)
    new PagefindUI({element: '#search', baseUrl: root, bundlePath: root + 'pagefind/', showImages: false});

  const chapters = document.querySelector('nav.sidebar details');
  if (chapters && matchMedia('(max-width: 800px)').matches) chapters.open = false;

  const copyByCommand = text => {   // where the clipboard API is missing or refused
    const area = Object.assign(document.createElement('textarea'), {value: text, readOnly: true});
    area.style.cssText = 'position: fixed; top: 0; opacity: 0';
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    area.remove();
    return ok;
  };
  for (const h of document.querySelectorAll('main h2[id], main h3[id], main section[id] > h2, main section[id] > h3')) {
    const id = h.id || h.parentElement.id;   // pandoc puts a heading's id on the heading or on its section
    if (!id || h.querySelector('a.anchor')) continue;
    // the mark is drawn by site.css, so the heading's text stays its own
    h.append(Object.assign(document.createElement('a'), {className: 'anchor', href: '#' + id,
                                                          title: 'A link to this section'}));
  }
  for (const pre of document.querySelectorAll('main pre')) {
    const code = pre.querySelector('code') || pre, button = document.createElement('button');
    Object.assign(button, {type: 'button', className: 'copy', textContent: 'Copy', title: 'Copy to the clipboard'});
    button.addEventListener('click', () => {
      const text = code.textContent, say = label => {
        button.textContent = label;
        setTimeout(() => { button.textContent = 'Copy'; }, 2000);
      };
      const api = navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject(new Error('no API'));
      api.then(() => say('Copied'), () => {
        if (copyByCommand(text)) return say('Copied');
        getSelection().selectAllChildren(code);   // the reader copies the selection by hand
        say('Press Ctrl+C');
      });
    });
    pre.append(button);
  }
})();
