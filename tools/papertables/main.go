// Command papertables regenerates docs/reproduction.md's generated blocks
// and docs/reproduction.html from the records the repository keeps under
// records/paper (configs/published.yaml names the runs), running nothing:
// `make paper-tables`. It needs neither libtorch nor the data root, so a
// fresh clone regenerates the documents in seconds; TestPaperDocs fails
// when the committed documents differ from what it writes.
//
//	go run ./tools/papertables [-claims configs/published.yaml] [-md docs/reproduction.md] [-html docs/reproduction.html]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/xp-nlp/xp/report"
)

func main() {
	claims := flag.String("claims", "configs/published.yaml", "the claims file: papers, runs and claims")
	md := flag.String("md", "docs/reproduction.md", "the Markdown document whose generated blocks to rewrite (\"\": none)")
	html := flag.String("html", "docs/reproduction.html", "the page to write (\"\": none)")
	flag.Parse()
	if err := report.PaperDocs(*claims, *md, *html, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "papertables:", err)
		os.Exit(1)
	}
}
