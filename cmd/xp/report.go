package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/report"
	"github.com/xp-nlp/xp/rundir"
)

const reportUsage = "usage: xp report [--out FILE.html] [--claims FILE] [--paper] [--title T] RUN [RUN...]"

// reportCmd writes the page of one or more run folders.
func reportCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	dest := fs.String("out", "", "the page to write (default RUN/report.html for one run; required for several)")
	claimsFile := fs.String("claims", "", "claims file whose published values the page shows beside the runs' (default: "+claims.FileName+" beside each run's config, if any)")
	paper := fs.Bool("paper", false, "show every claim of the claims file at the top, run here or not (the reproduction page)")
	title := fs.String("title", "", "the page's title (default: the runs' config names)")
	if err := parseFlags(fs, args, reportUsage, out); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New(reportUsage)
	}
	if *dest == "" {
		if fs.NArg() > 1 {
			return errors.New("xp report: several runs make one page: name it with --out FILE.html")
		}
		if !rundir.IsRun(fs.Arg(0)) {
			// Its report.html would be replaced: a folder holding a JSON
			// manifest.json is not thereby xp's.
			return fmt.Errorf("xp report: %s is no xp run folder (xp marks its own): name the page with --out FILE.html", fs.Arg(0))
		}
		*dest = filepath.Join(fs.Arg(0), "report.html")
	}
	if *paper && *claimsFile == "" {
		return errors.New("xp report --paper: name the claims file with --claims (configs/" + claims.FileName + ")")
	}
	path, err := writeReport(fs.Args(), *dest, report.Options{Title: *title, Paper: *paper}, *claimsFile)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "wrote", path)
	return nil
}

// writeReport reads the runs, decides their claims and writes the page
// to dest, atomically.
func writeReport(dirs []string, dest string, opt report.Options, file string) (string, error) {
	var runs []*report.Run
	for _, d := range dirs {
		r, err := report.Read(d)
		if err != nil {
			return "", err
		}
		runs = append(runs, r)
	}
	var err error
	if opt.Paper {
		var f *claims.File
		if f, err = claims.Read(file); err == nil {
			opt.Agreements, err = f.Decide()
		}
	} else {
		opt.Agreements, err = report.Claims(runs, file)
	}
	if err != nil {
		return "", err
	}
	opt.Generator = "xp " + buildVersion()
	var b bytes.Buffer
	if err := report.Write(&b, runs, opt); err != nil {
		return "", err
	}
	return dest, xio.WriteFileAtomic(dest, b.Bytes())
}
