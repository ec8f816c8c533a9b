// The offline docs site's script (tools/build_docs.py copies it into the site as site.js): Pagefind's search box,
// a copy button on every code block, a link on every section heading, and the chapter list folded away on a narrow
// screen.
(() => {
  const root = new URL('.', document.currentScript.src).pathname;   // the site's folder, wherever it is served
  const search = document.getElementById('search');
  if (search && location.protocol === 'file:')   // Pagefind fetches its index, which a page opened from a file cannot
    search.textContent = 'Search works on the served site: python -m http.server -d _site';
  else if (search && window.PagefindUI)
    // showSubResults: under each page, the sections that match, each linking to its heading
    new PagefindUI({element: '#search', baseUrl: root, bundlePath: root + 'pagefind/', showImages: false,
                    showSubResults: true});

  // Pagefind answers a word it has not indexed with the longest prefix it has ("zqxj" finds pages with "z"). A
  // result none of whose highlighted words shares its first four letters (or all of a shorter word) with a word
  // typed is hidden, and the message counts what is left: "No results" when nothing is.
  const shared = (a, b) => { let i = 0; while (i < a.length && a[i] === b[i]) i++; return i; };
  const prune = () => {
    const typed = (search.querySelector('input')?.value || '').trim(), words = typed.toLowerCase().split(/\s+/);
    const message = search.querySelector('.pagefind-ui__message');
    if (!typed || !message) return;
    let kept = 0, loading = false;
    for (const result of search.querySelectorAll('.pagefind-ui__result')) {
      const marks = [...result.querySelectorAll('mark')].map(m => m.textContent.toLowerCase());
      if (!marks.length) { loading = true; continue; }          // its excerpt has not arrived yet
      const match = marks.some(m => words.some(w => shared(m, w) >= Math.min(4, w.length)));
      result.style.display = match ? '' : 'none';
      kept += match;
    }
    const text = loading ? null : kept ? `${kept} result${kept === 1 ? '' : 's'} for ${typed}` : `No results for ${typed}`;
    if (text && message.textContent !== text) message.textContent = text;
  };
  if (search) new MutationObserver(prune).observe(search, {childList: true, subtree: true, characterData: true});

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
  // a link to a heading inside a folded aside (the table of contents, a search result) opens the aside
  const byHash = hash => { try { return document.getElementById(decodeURIComponent(hash.slice(1))); } catch (e) { return null; } };
  const unfold = hash => {
    const target = hash && byHash(hash);
    let closed = false;
    for (let a = target && target.closest('details.aside'); a; a = a.parentElement.closest('details.aside'))
      if (!a.open) { a.open = true; closed = true; }       // every folded aside around it, the outer ones too
    if (closed) target.scrollIntoView();
  };
  addEventListener('hashchange', () => unfold(location.hash));
  // a second click on the same link fires no hashchange: open the aside anyway
  document.addEventListener('click', e => { const a = e.target.closest('a[href^="#"]'); if (a) unfold(a.hash); });
  unfold(location.hash);
  const shown = e => (e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0);
  // "On this page": beside the text on a wide screen, the section in view marked as the reader scrolls
  const toc = document.querySelector('nav#TOC'), wide = matchMedia('(min-width: 1200px)');
  if (toc) {
    if (wide.matches) document.body.append(toc);
    const links = [...toc.querySelectorAll('a[href^="#"]')];
    const heads = links.map(a => byHash(a.hash)).filter(Boolean);
    let queued = false;
    const mark = () => {
      queued = false;
      let at = 0;
      heads.forEach((h, i) => { if (shown(h) && h.getBoundingClientRect().top < 80) at = i; });  // not folded away
      links.forEach((a, i) => a.classList.toggle('current', heads[i] === heads[at]));
    };
    addEventListener('scroll', () => { if (!queued) { queued = true; requestAnimationFrame(mark); } });
    mark();
  }

  // a figure links to itself (a tap opens it whole); one much wider than a phone keeps a legible size there
  for (const img of document.querySelectorAll('main img')) {
    const link = Object.assign(document.createElement('a'), {className: 'figure', href: img.getAttribute('src'),
                                                            title: 'Open the figure on its own'});
    img.replaceWith(link); link.append(img);
    const size = () => img.classList.toggle('wide', img.naturalWidth >= 900);
    img.complete ? size() : img.addEventListener('load', size);
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
