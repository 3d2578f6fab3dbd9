package main

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// dist is the page bundle that build.sh writes into web/dist. The
// directory holds only .gitkeep in a fresh clone; the server then serves
// a page that says how to build the bundle.
//
//go:embed all:web/dist
var dist embed.FS

// pageFS returns the bundle, and whether it has been built.
func pageFS() (fs.FS, bool) {
	sub, err := fs.Sub(dist, "web/dist")
	if err != nil {
		return nil, false
	}
	if _, err := fs.Stat(sub, "index.html"); err != nil {
		return sub, false
	}
	if _, err := fs.Stat(sub, "app.js"); err != nil {
		return sub, false
	}
	return sub, true
}

const missingBundle = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>framewire UI agent demo</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1b1f2a}
code{background:#eef0f5;padding:.1em .35em;border-radius:5px}</style></head>
<body><h1>The demo page has not been built</h1>
<p>This server was compiled without the page bundle. Build it and run the server again:</p>
<p><code>examples/ui-agent/build.sh &amp;&amp; go run ./examples/ui-agent</code></p>
<p>(<code>make run</code> does both.)</p></body></html>
`

// pageHandler serves the embedded bundle, or the "not built" page.
func pageHandler() http.Handler {
	sub, ok := pageFS()
	if !ok {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" && r.URL.Path != "/index.html" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write([]byte(missingBundle))
		})
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The bundle changes with every build and is small: never cache it,
		// so a rebuilt demo is what the browser shows.
		w.Header().Set("Cache-Control", "no-cache")
		if strings.HasSuffix(r.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		files.ServeHTTP(w, r)
	})
}
