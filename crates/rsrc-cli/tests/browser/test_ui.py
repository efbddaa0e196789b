"""`rsrc ui` end to end in headless Chromium: a directory's tree and search, previews by
type, a template completed by the server, a preview following changes to its file, a
hostile server that cannot run anything in the page, a server that dies and comes back,
and `rsrc ls --filter` against a server that filters. Everything is found by its
accessible role and name, and every wait is on the page's state, never on time."""

import base64
import json
import subprocess

from playwright.sync_api import expect

from conftest import HOSTILE, RSRC, shot

# A 2x2 PNG.
PNG = base64.b64decode(
    'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==')


def directory(tmp_path):
    root = tmp_path / 'served'
    (root / 'docs').mkdir(parents=True)
    (root / 'README.md').write_text('# Hello from the README\n\nSome *emphasis* and a [link](https://example.com/).\n')
    (root / 'docs' / 'guide.md').write_text('# The guide\n')
    (root / 'docs' / 'notes.txt').write_text('first version\n')
    (root / 'data.json').write_text(json.dumps({'name': 'rsrc', 'tags': ['a', 'b'], 'nested': {'deep': True}}))
    (root / 'table.csv').write_text('city,country\nLyon,France\n"Porto, old town",Portugal\n')
    (root / 'logo.png').write_bytes(PNG)
    return root


def open_page(page, ui_started):
    response = page.goto(ui_started.url)
    assert response.ok
    return response


def tree(page):
    return page.get_by_role('tree')


def item(page, name, exact=False):
    return tree(page).get_by_role('treeitem', name=name, exact=exact)


def preview(page):
    return page.get_by_role('region', name='Preview', exact=True)


def metadata(page):
    return page.get_by_role('region', name='Metadata', exact=True)


def test_a_directory_opens_as_a_tree_that_expands_and_searches(page, ui, tmp_path):
    root = directory(tmp_path)
    u = ui('--', RSRC, 'serve', str(root))
    open_page(page, u)
    expect(page.get_by_role('status').first).to_contain_text('1 server connected')
    docs = item(page, 'docs')
    expect(docs).to_have_attribute('aria-expanded', 'false')
    docs.click()
    expect(docs).to_have_attribute('aria-expanded', 'true')
    expect(item(page, 'guide.md')).to_be_visible()
    # The keyboard: down from docs reaches its first child, left goes back up.
    docs.focus()
    page.keyboard.press('ArrowDown')
    expect(item(page, 'guide.md')).to_be_focused()
    page.keyboard.press('ArrowLeft')
    expect(docs).to_be_focused()
    shot(page, 'tree')
    search = page.get_by_role('searchbox')
    search.fill('NOTES')
    results = page.get_by_role('list', name='Search results')
    expect(results).to_contain_text('notes.txt')
    expect(results).not_to_contain_text('guide.md')
    expect(page.get_by_label('Narrow by MIME type')).to_be_visible()
    search.fill('')
    expect(tree(page)).to_be_visible()


def test_previews_render_markdown_json_csv_and_images(page, ui, tmp_path):
    root = directory(tmp_path)
    u = ui('--', RSRC, 'serve', str(root))
    open_page(page, u)
    item(page, 'README.md').click()
    expect(preview(page).get_by_role('heading', name='Hello from the README')).to_be_visible()
    expect(preview(page).locator('em')).to_have_text('emphasis')
    expect(metadata(page)).to_contain_text('text/markdown')
    expect(metadata(page)).to_contain_text('ttlMs')
    shot(page, 'markdown')
    item(page, 'data.json').click()
    json_view = preview(page).get_by_role('group', name='JSON')
    expect(json_view).to_contain_text('"nested"')
    expect(json_view).to_contain_text('"rsrc"')
    shot(page, 'json')
    item(page, 'table.csv').click()
    expect(preview(page).get_by_role('cell', name='Porto, old town')).to_be_visible()
    expect(preview(page).get_by_role('columnheader', name='country')).to_be_visible()
    item(page, 'logo.png').click()
    page.wait_for_function("() => { const i = document.querySelector('#preview img.image');"
                           " return i && i.complete && i.naturalWidth === 2 && i.src.startsWith('blob:'); }")
    assert page.errors == []


def test_a_template_is_completed_by_the_server_and_opened(page, ui):
    u = ui()  # the bundled sample, in process
    open_page(page, u)
    templates = item(page, 'Templates')
    templates.click()
    item(page, 'Database rows').click()
    form = preview(page).get_by_role('form')
    db = form.get_by_role('combobox', name='db')
    db.fill('book')
    expect(form.get_by_role('option', name='bookshop')).to_be_visible()
    form.get_by_role('option', name='bookshop').click()
    table = form.get_by_role('combobox', name='table')
    table.fill('')
    table.press('ArrowDown')
    expect(form.get_by_role('listbox', name='Values for table')).to_contain_text('books')
    shot(page, 'template')
    form.get_by_role('option', name='books', exact=True).click()
    pk = form.get_by_role('combobox', name='pk')
    pk.fill('1')
    expect(form.locator('output')).to_have_text('db://bookshop/books/1')
    form.get_by_role('button', name='Open').click()
    expect(preview(page).get_by_role('heading')).to_contain_text('db://bookshop/books/1')
    expect(preview(page).get_by_role('group', name='JSON')).to_be_visible()
    expect(preview(page).get_by_role('tab')).to_have_count(2)  # JSON and its CSV alternative


def test_writing_the_open_file_updates_the_preview(page, ui, tmp_path):
    root = directory(tmp_path)
    u = ui('--', RSRC, 'serve', str(root))
    open_page(page, u)
    item(page, 'docs').click()
    item(page, 'notes.txt').click()
    expect(preview(page).locator('pre.text')).to_have_text('first version\n')
    # The subscription is in place once the server reports watching it.
    expect(page.locator('#servers')).to_contain_text('live')
    page.wait_for_function(
        "() => fetch('/api/servers').then(r => r.json()).then(s => s.servers[0].watched.some(u => u.endsWith('/docs/notes.txt')))")
    (root / 'docs' / 'notes.txt').write_text('second version\n')
    expect(preview(page).locator('pre.text')).to_have_text('second version\n', timeout=2000)
    expect(preview(page)).to_contain_text('Updated at')


def test_a_hostile_server_cannot_run_anything_in_the_page(page, ui, tmp_path):
    log = tmp_path / 'hostile.log'
    u = ui('--', *HOSTILE, env={'HOSTILE_LOG': str(log)})
    response = open_page(page, u)
    csp = response.headers.get('content-security-policy', '')
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and 'trusted-types' in csp, csp
    expect(page.get_by_role('status').first).to_contain_text('1 server connected')
    for name in ['docs', 'img', 'text', 'json']:
        item(page, name, exact=True).click()
    # Names are shown as text: the <script> is in the name, not in the page.
    evil = item(page, 'Evil <img')
    expect(evil).to_contain_text('<img src=x onerror=')
    evil.click()
    expect(preview(page).get_by_role('heading', name='Hostile document')).to_be_visible()
    expect(metadata(page)).to_contain_text('audience')
    # A javascript: link lost its target; a web link asks first, and is not followed.
    preview(page).get_by_role('link', name='the web').click()
    dialog = page.get_by_role('dialog', name='Open this link?')
    expect(dialog).to_contain_text('https://example.com/')
    dialog.get_by_role('button', name='Cancel').click()
    item(page, 'evil.svg').click()
    page.wait_for_function("() => { const i = document.querySelector('#preview img.image');"
                           " return i && i.complete && i.naturalWidth > 0; }")
    item(page, 'evil.txt').click()
    expect(preview(page).locator('pre.text')).to_contain_text('<script>window.__pwned=1</script>')
    item(page, 'evil.html').click()
    expect(preview(page).locator('pre.text')).to_contain_text('<html><script>')
    item(page, 'evil.json').click()
    expect(preview(page).get_by_role('group', name='JSON')).to_contain_text('onerror')
    # An error is shown in place, with its code and message.
    item(page, 'error <img', exact=False).click()
    expect(preview(page).get_by_role('alert')).to_contain_text('error -32603: failed <img src=x')
    item(page, 'Templates').click()
    item(page, 'template <script>').click()
    field = preview(page).get_by_role('combobox', name='name')
    field.fill('a')
    expect(preview(page).get_by_role('option', name='alpha')).to_be_visible()
    shot(page, 'hostile')
    # The search is filtered by the server, which declares SEP-2564.
    page.get_by_role('searchbox').fill('evil')
    expect(page.get_by_role('list', name='Search results')).to_contain_text('evil.svg')
    expect(page.locator('#search-note')).to_contain_text('filtered by the server')
    filters = [json.loads(line)['params'].get('filter') for line in log.read_text().splitlines()
               if json.loads(line)['method'] == 'resources/list']
    assert {'namePatterns': ['*evil*', '*EVIL*', '*Evil*']} in filters, filters
    page.get_by_role('button', name='Suggest for the assistant').click()
    expect(page.get_by_role('region', name='Context basket')).to_contain_text('2 resources')
    assert page.evaluate('() => window.__pwned') is None
    assert page.errors == []


def test_a_server_that_dies_shows_disconnected_and_comes_back_on_retry(page, ui):
    u = ui('--', *HOSTILE)
    open_page(page, u)
    status = page.get_by_role('status').first
    expect(status).to_contain_text('1 server connected')
    item(page, 'die', exact=True).click()
    expect(status).to_contain_text('1 of 1 server disconnected')
    expect(page.locator('#servers')).to_contain_text('disconnected')
    page.get_by_role('button', name='Retry').click()
    expect(status).to_contain_text('1 server connected')
    expect(item(page, 'docs', exact=True)).to_be_visible()


def test_a_server_that_hangs_shows_disconnected_after_the_timeout(page, ui):
    u = ui('--timeout', '2s', '--', *HOSTILE)
    open_page(page, u)
    status = page.get_by_role('status').first
    expect(status).to_contain_text('1 server connected')
    item(page, 'hang', exact=True).click()
    expect(preview(page).get_by_role('alert')).to_contain_text('did not answer in time', timeout=10000)
    expect(status).to_contain_text('1 of 1 server disconnected', timeout=10000)
    expect(page.locator('#servers')).to_contain_text('disconnected: the server stopped answering')
    page.get_by_role('button', name='Retry').click()
    expect(status).to_contain_text('1 server connected')


def test_several_servers_are_one_tree_and_one_search(page, ui, tmp_path):
    root = directory(tmp_path)
    u = ui('-c', f'{RSRC} serve {root}', '--', *HOSTILE, env={'HOSTILE_NO_FILTERING': '1'})
    open_page(page, u)
    expect(page.get_by_role('status').first).to_contain_text('2 servers connected')
    expect(tree(page).get_by_role('treeitem', level=1)).to_have_count(2)
    page.get_by_role('searchbox').fill('guide')
    results = page.get_by_role('list', name='Search results')
    expect(results).to_contain_text('file:///docs/guide.md')
    expect(results).to_contain_text('hostile:///docs/guide.md')
    expect(page.locator('#search-note')).to_contain_text('matched here')
    expect(page.locator('#search-note')).to_contain_text('filtered by the server')


def test_ls_filter_asks_a_server_that_filters(tmp_path):
    log = tmp_path / 'hostile.log'
    out = subprocess.run([RSRC, 'ls', '--json', '--filter', 'guide', '--', *HOSTILE], capture_output=True,
                         text=True, env={'HOSTILE_LOG': str(log), 'PATH': '/usr/bin:/bin'}, timeout=60, check=True)
    assert [r['uri'] for r in json.loads(out.stdout)] == ['hostile:///docs/guide.md']
    sent = [json.loads(line)['params'] for line in log.read_text().splitlines()
            if json.loads(line)['method'] == 'resources/list']
    assert [p.get('filter') for p in sent] == [
        {'namePatterns': ['*guide*', '*GUIDE*', '*Guide*']},
        {'uriPatterns': ['**/*guide*', '**/*guide*/**', '**/*GUIDE*', '**/*GUIDE*/**',
                         '**/*Guide*', '**/*Guide*/**']},
    ]


def test_a_large_text_is_shown_progressively_with_its_size(page, ui, tmp_path):
    root = tmp_path / 'big'
    root.mkdir()
    line = 'x' * 99 + '\n'
    (root / 'big.txt').write_text(line * (10 * 1024 * 1024 // 100))
    u = ui('--', RSRC, 'serve', str(root))
    open_page(page, u)
    item(page, 'big.txt').click()
    region = preview(page)
    expect(region.locator('.progress')).to_have_text('10.0 MiB, all shown', timeout=30000)
    length = page.evaluate("() => document.querySelector('#preview pre.text').textContent.length")
    assert length == len(line) * (10 * 1024 * 1024 // 100)
    # The page answered while it filled: the search box still takes input.
    page.get_by_role('searchbox').fill('big')
    expect(page.get_by_role('list', name='Search results')).to_contain_text('big.txt')
