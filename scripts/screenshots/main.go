// Command screenshots saves a PNG of every section of mpiflow reports, as
// headless Chromium shows them 1400 px wide: scripts/screenshots.sh runs it
// for the README's pictures (docs/screenshots).
//
//	go run ./scripts/screenshots OUTDIR NAME=REPORT.html ...
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// sections are the report's sections with stable ids, in page order;
// optional ones are there only in some reports: "compare-runs" with
// --compare, "regions" for programs that call MPI_Pcontrol.
var sections = []string{"job", "compare-runs", "calls", "regions", "callsites", "comm-matrix", "load-balance", "graphs", "overview", "timeline"}

var optional = map[string]bool{"compare-runs": true, "regions": true}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: screenshots OUTDIR NAME=REPORT.html ...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(out string, reports []string) error {
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(envOr("CHROMIUM", "/usr/bin/chromium")), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.WindowSize(1400, 900))
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// Start the browser with a context without timeout (see chromedp.Run).
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("start %s: %w", envOr("CHROMIUM", "/usr/bin/chromium"), err)
	}
	ctx, cancel := context.WithTimeout(bctx, 5*time.Minute)
	defer cancel()
	for _, arg := range reports {
		name, path, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want NAME=REPORT.html", arg)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady(chromedp.CSS("#t-canvas"))); err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		for _, id := range sections {
			if optional[id] {
				has, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`") !== null`))
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				if !has {
					continue
				}
			}
			err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs+"#"+id), chromedp.WaitVisible(chromedp.CSS("#"+id)))
			var png []byte
			if err == nil {
				png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#"+id)))
			}
			if err != nil {
				return fmt.Errorf("%s#%s: %w", path, id, err)
			}
			file := filepath.Join(out, name+"-"+id+".png")
			if err := os.WriteFile(file, png, 0o644); err != nil {
				return err
			}
			fmt.Println(file)
		}
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
