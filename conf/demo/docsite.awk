# SPDX-License-Identifier: Apache-2.0
# The site dictionary page's small site: the project's documents (Markdown) as HTML pages, one
# per "## " or "### " section, each in the same template (head, header, the panel that says how
# the page arrived, the table of contents of every page, footer), as a documentation site's
# pages are. conf/demo/prepare.sh runs it and trains the site dictionary on what it writes.
#
#   awk -v out=DIR -f docsite.awk README.md docs/contract.md ...
#
# Writes DIR/NN-SLUG.html for each section and DIR/index.html (the contents). Markdown as the
# project writes it: headings, paragraphs, lists, fenced code, tables, `code`, **bold**, links
# (their text only: the documents' links point into the repository).
function esc(s) {
    gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
    return s
}
function inline(s,   out, inner) {
    s = esc(s)
    while (match(s, /!?\[[^]]*\]\([^)]*\)/)) {
        inner = substr(s, RSTART, RLENGTH)
        sub(/^!?\[/, "", inner); sub(/\]\(.*$/, "", inner)
        s = substr(s, 1, RSTART - 1) inner substr(s, RSTART + RLENGTH)
    }
    out = ""
    while (match(s, /`[^`]+`/)) {
        out = out substr(s, 1, RSTART - 1) "<code>" substr(s, RSTART + 1, RLENGTH - 2) "</code>"
        s = substr(s, RSTART + RLENGTH)
    }
    s = out s
    while (match(s, /\*\*[^*]+\*\*/))
        s = substr(s, 1, RSTART - 1) "<strong>" substr(s, RSTART + 2, RLENGTH - 4) "</strong>" substr(s, RSTART + RLENGTH)
    return s
}
function slug(t) {
    t = tolower(t)
    gsub(/[^a-z0-9]+/, "-", t); gsub(/^-+|-+$/, "", t)
    t = substr(t, 1, 40); sub(/-+$/, "", t)
    return t
}
function emit(html) { body[n] = body[n] html "\n" }
function close_block() {
    if (para != "") { emit("<p>" para "</p>"); para = "" }
    if (inlist) { emit("<li>" item "</li>\n</ul>"); inlist = 0; item = "" }
    if (intable) { emit("</table>"); intable = 0 }
}
function cells(line, tag,   parts, k, m, row) {
    sub(/^ *\| */, "", line); sub(/ *\| *$/, "", line)
    m = split(line, parts, / *\| */)
    row = "<tr>"
    for (k = 1; k <= m; k++) row = row "<" tag ">" inline(parts[k]) "</" tag ">"
    return row "</tr>"
}
FNR == 1 { doc = FILENAME; sub(/^.*\//, "", doc); sub(/\.md$/, "", doc); title_of_doc = "" }
# A fenced block: as it is, in <pre>.
/^ *```/ {
    if (!incode) { incode = 1; if (n > 0) { close_block(); body[n] = body[n] "<pre><code>" }; next }
    incode = 0; if (n > 0) body[n] = body[n] "</code></pre>\n"; next
}
incode { if (n > 0) body[n] = body[n] esc($0) "\n"; next }
/^# / { title_of_doc = substr($0, 3); next }
/^###? / {
    if (n > 0) close_block()
    n++
    title[n] = $0; sub(/^#+ /, "", title[n])
    from[n] = doc ".md" (title_of_doc != "" ? ", " title_of_doc : "")
    file[n] = sprintf("%02d-%s.html", n, slug(title[n]))
    next
}
n == 0 { next }
/^ *$/ { close_block(); next }
/^ *\|/ {
    if (para != "" || inlist) close_block()
    if ($0 ~ /^ *\|[-:| ]+\| *$/) next
    if (!intable) { emit("<table>"); emit(cells($0, "th")); intable = 1 } else emit(cells($0, "td"))
    next
}
/^ *[-*] / {
    if (para != "") { emit("<p>" para "</p>"); para = "" }
    if (!inlist) { emit("<ul>"); inlist = 1 } else emit("<li>" item "</li>")
    item = $0; sub(/^ *[-*] /, "", item); item = inline(item)
    next
}
{
    line = $0; sub(/^ +/, "", line)
    if (inlist) item = item " " inline(line); else para = (para == "" ? "" : para " ") inline(line)
}
END {
    close_block()
    toc = "<nav class=\"docs-toc\" aria-label=\"contents\"><ul>\n"
    for (i = 1; i <= n; i++) toc = toc "<li><a href=\"" file[i] "\">" inline(title[i]) "</a></li>\n"
    toc = toc "</ul></nav>"
    for (i = 0; i <= n; i++) {
        name = i == 0 ? "index.html" : file[i]
        t = i == 0 ? "Contents" : inline(title[i])
        f = out "/" name
        print "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">" > f
        print "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" > f
        print "<title>" t " - mod_multicompress documentation</title>" > f
        print "<link rel=\"stylesheet\" href=\"/style.css\">\n<script src=\"/app.js\" defer></script>" > f
        print "<script src=\"/site-dictionary/arrival.js\" defer></script>\n</head>\n<body>\n<header>" > f
        print "<h1><a href=\"/\">mod_multicompress</a></h1>" > f
        print "<p class=\"tagline\">The documentation as a small site: every page arrives as " \
              "<code>dcz</code> against the site dictionary once your browser holds it.</p>" > f
        print "<nav class=\"panels\"></nav>\n</header>\n<main>" > f
        print "<section class=\"panel\" id=\"panel-arrival\">\n<h2>How this page arrived</h2>\n<div>" > f
        print "<table id=\"arrival\">" > f
        print "<tr><th>coding</th><td id=\"page-coding\" class=\"value\">?</td></tr>" > f
        print "<tr><th>transfer size</th><td id=\"page-transfer\" class=\"value\">?</td></tr>" > f
        print "<tr><th>size</th><td id=\"page-size\">?</td></tr>" > f
        print "<tr><th>source</th><td id=\"page-source\">?</td></tr>" > f
        print "<tr><th>dictionary the browser named</th><td id=\"page-dictionary\">?</td></tr>" > f
        print "<tr><th>without a dictionary</th><td id=\"page-without\">?</td></tr>" > f
        print "<tr><th>the server's Link header</th><td id=\"page-link\">?</td></tr>" > f
        print "</table>\n</div>\n<div>" > f
        print "<p><a href=\"/site-dictionary/\">Site dictionary</a>: what this is. " \
              (i < n ? "<a id=\"next\" href=\"" file[i + 1] "\">Next page</a>: " inline(title[i + 1]) : "") "</p>" > f
        print "</div>\n</section>\n<div class=\"docs\">\n" toc "\n<article>" > f
        if (i == 0) {
            print "<h2>The documentation</h2>\n<p>The project's README and two of its documents, " \
                  "one page per section, in the order of the contents.</p>" > f
        } else {
            print "<h2>" t "</h2>\n<p class=\"muted\">From " esc(from[i]) ".</p>" > f
            printf "%s", body[i] > f
        }
        print "</article>\n</div>\n<h2>Every resource this page loaded</h2>\n<div data-resources></div>" > f
        print "</main>\n<footer><p>Served by Apache httpd with mod_multicompress. " \
              "Started by <code>scripts/demo.sh</code>.</p></footer>\n</body>\n</html>" > f
        close(f)
    }
}
