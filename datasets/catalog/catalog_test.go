package catalog

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/internal/realdata"
)

// sst2Zip builds a small archive laid out like GLUE's SST-2.zip.
func sst2Zip(t *testing.T, extra ...string) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	files := map[string]string{
		"SST-2/train.tsv": "sentence\tlabel\n" + strings.Repeat("a good film \t1\na dull film \t0\n", 2000),
		"SST-2/dev.tsv":   "sentence\tlabel\nfine \t1\n",
		"SST-2/test.tsv":  "index\tsentence\n0\tok\n",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		files[extra[i]] = extra[i+1]
	}
	for n, s := range files {
		f, _ := w.Create(n)
		f.Write([]byte(s))
	}
	w.Close()
	return b.Bytes()
}

func md5sum(b []byte) string    { s := md5.Sum(b); return "md5:" + hex.EncodeToString(s[:]) }
func sha256sum(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }

// server serves body at /SST-2.zip on loopback. The first cutAfter > 0
// request is cut after that many bytes (the connection is dropped); it
// honours Range unless ignoreRange.
type server struct {
	body        []byte
	cutAfter    int
	ignoreRange bool
	// etag, when set, is sent with every response; a Range request with an
	// If-Range that does not match it gets the whole body (RFC 9110).
	etag     string
	mu       sync.Mutex
	ranges   []string
	ifRanges []string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.ifRanges = append(s.ifRanges, r.Header.Get("If-Range"))
	cut := s.cutAfter
	s.cutAfter = 0
	body, etag := s.body, s.etag
	s.mu.Unlock()
	status := http.StatusOK
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	if rg := r.Header.Get("Range"); rg != "" && !s.ignoreRange && (r.Header.Get("If-Range") == "" || r.Header.Get("If-Range") == etag) {
		from, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		w.Header().Set("Content-Range", "bytes "+strconv.Itoa(from)+"-"+strconv.Itoa(len(body)-1)+"/"+strconv.Itoa(len(body)))
		body, status = body[from:], http.StatusPartialContent
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if cut > 0 {
		w.Write(body[:cut])
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	w.Write(body)
}

func artifact(url, sum string) Artifact {
	a, _ := Find("sst2")
	a.Files = []File{{URL: url, Path: "sst2/SST-2.zip", Sum: sum}}
	return a
}

func TestFetchResumeVerifyUnpack(t *testing.T) {
	body := sst2Zip(t)
	srv := &server{body: body, cutAfter: len(body) / 3}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	root := t.TempDir()
	a := artifact(ts.URL+"/SST-2.zip", md5sum(body))

	err := Fetch(context.Background(), a, root, FetchOptions{})
	if err == nil || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("interrupted download: %v", err)
	}
	part := filepath.Join(root, "sst2/SST-2.zip.part")
	if st, err := os.Stat(part); err != nil || st.Size() != int64(len(body)/3) {
		t.Fatalf("partial file: %v %v", st, err)
	}
	if err := Fetch(context.Background(), a, root, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "bytes=" + strconv.Itoa(len(body)/3) + "-"; srv.ranges[1] != want {
		t.Errorf("second request asked %q, want %q", srv.ranges[1], want)
	}
	d, err := datasets.Load(context.Background(), root, "sst2", datasets.Options{})
	if err != nil || len(d.Splits["train"]) != 4000 || len(d.Splits["dev"]) != 1 {
		t.Fatalf("unpacked dataset: %v %v", d, err)
	}
	// Present and verified: a third run does not download.
	if err := Fetch(context.Background(), a, root, FetchOptions{}); err != nil || len(srv.ranges) != 2 {
		t.Errorf("third fetch: %v, %d requests", err, len(srv.ranges))
	}
	st := List(root, true)
	found := false
	for _, s := range st {
		if s.Artifact.Name == "sst2" {
			found = true
			// List checks against the real catalog, whose published md5
			// this fixture archive cannot match.
			if !strings.HasPrefix(s.Check, "MISMATCH") {
				t.Errorf("list did not catch the fixture's checksum: %+v", s)
			}
		}
	}
	if !found {
		t.Error("sst2 not listed")
	}
}

func TestFetchRetriesAndIgnoredRange(t *testing.T) {
	body := sst2Zip(t)
	srv := &server{body: body, cutAfter: 100, ignoreRange: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	root := t.TempDir()
	if err := Fetch(context.Background(), artifact(ts.URL+"/x.zip", sha256sum(body)), root, FetchOptions{Retries: 2}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "sst2/SST-2.zip"))
	if !bytes.Equal(got, body) {
		t.Error("a server ignoring Range corrupted the resumed file")
	}
}

func TestFetchChecksumMismatch(t *testing.T) {
	body := sst2Zip(t)
	ts := httptest.NewServer(&server{body: body})
	defer ts.Close()
	root := t.TempDir()
	err := Fetch(context.Background(), artifact(ts.URL+"/x.zip", "md5:00000000000000000000000000000000"), root, FetchOptions{})
	if err == nil || !strings.Contains(err.Error(), "does not match the published") {
		t.Fatalf("mismatch: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "sst2")); len(ents) != 0 {
		t.Errorf("files left after a failed verification: %v", ents)
	}
}

func TestFetchRejectsEscapingMember(t *testing.T) {
	body := sst2Zip(t, "SST-2/../../evil.txt", "x")
	ts := httptest.NewServer(&server{body: body})
	defer ts.Close()
	root := t.TempDir()
	err := Fetch(context.Background(), artifact(ts.URL+"/x.zip", ""), root, FetchOptions{})
	if err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("zip-slip member: %v", err)
	}
}

func TestMirror(t *testing.T) {
	body := sst2Zip(t)
	// A mirror that keeps the published archive by its base name.
	m1 := t.TempDir()
	os.WriteFile(filepath.Join(m1, "SST-2.zip"), body, 0o644)
	root := t.TempDir()
	a := artifact("http://127.0.0.1:1/never-used", md5sum(body))
	if err := Fetch(context.Background(), a, root, FetchOptions{Mirror: m1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sst2/train.tsv")); err != nil {
		t.Error("mirrored archive not unpacked")
	}
	// A mirror that holds the extracted layout only (like ../shared/data),
	// verified against the catalog's checksums of that layout.
	dev := []byte("sentence\tlabel\nok\t1\n")
	m2 := t.TempDir()
	os.MkdirAll(filepath.Join(m2, "sst2"), 0o755)
	os.WriteFile(filepath.Join(m2, "sst2/dev.tsv"), dev, 0o644)
	root2 := t.TempDir()
	a.Layout = []File{{Path: "sst2/dev.tsv", Sum: sha256sum(dev)}, {Path: "sst2/train.tsv", Sum: sha256sum([]byte("absent from the mirror"))}}
	var log bytes.Buffer
	if err := Fetch(context.Background(), a, root2, FetchOptions{Mirror: m2, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "1 files verified against the catalog's checksums") {
		t.Errorf("log: %s", log.String())
	}
	if d, err := datasets.Load(context.Background(), root2, "sst2", datasets.Options{}); err != nil || len(d.Splits["dev"]) != 1 {
		t.Errorf("extracted-layout mirror: %v %v", d, err)
	}
	// An artifact the mirror lacks is an error naming what was looked for.
	e, _ := Find("glove.840B")
	if err := Fetch(context.Background(), e, root2, FetchOptions{Mirror: m2}); err == nil || !strings.Contains(err.Error(), "glove.840B.300d.zip") {
		t.Errorf("missing in mirror: %v", err)
	}
}

// TestMirrorLayoutChecked: a mirror's extracted layout whose files do not
// match the catalog's checksums is not copied (nor trusted when already
// in place), and a symbolic link that leads out of the mirror is not
// followed; one inside the mirror is.
func TestMirrorLayoutChecked(t *testing.T) {
	a := artifact("http://127.0.0.1:1/never-used", "")
	good, bad := []byte("sentence\tlabel\nok\t1\n"), []byte("sentence\tlabel\ntampered\t0\n")
	a.Layout = []File{{Path: "sst2/dev.tsv", Sum: sha256sum(good)}}
	mirror := func(files map[string][]byte) string {
		m := t.TempDir()
		os.MkdirAll(filepath.Join(m, "sst2"), 0o755)
		for name, b := range files {
			os.WriteFile(filepath.Join(m, "sst2", name), b, 0o644)
		}
		return m
	}
	root := t.TempDir()
	err := Fetch(context.Background(), a, root, FetchOptions{Mirror: mirror(map[string][]byte{"dev.tsv": bad})})
	if err == nil || !strings.Contains(err.Error(), "sst2/dev.tsv: sha256") || !strings.Contains(err.Error(), "the copy was removed") {
		t.Errorf("tampered mirror: %v", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("a rejected copy left %v", ents)
	}
	// Already in place but tampered: refused, not reported present.
	os.MkdirAll(filepath.Join(root, "sst2"), 0o755)
	os.WriteFile(filepath.Join(root, "sst2/dev.tsv"), bad, 0o644)
	if err := Fetch(context.Background(), a, root, FetchOptions{Mirror: mirror(map[string][]byte{"dev.tsv": good})}); err == nil || !strings.Contains(err.Error(), "exists but") {
		t.Errorf("tampered copy in place: %v", err)
	}
	// A link out of the mirror (to a secret elsewhere) is refused.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("not the mirror's"), 0o644)
	m := mirror(map[string][]byte{"dev.tsv": good})
	os.Symlink(outside, filepath.Join(m, "sst2", "train.tsv"))
	root2 := t.TempDir()
	err = Fetch(context.Background(), a, root2, FetchOptions{Mirror: m})
	if err == nil || !strings.Contains(err.Error(), "leads outside the mirror") {
		t.Errorf("link out of the mirror: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root2, "sst2", "train.tsv")); err == nil {
		t.Error("the linked file was copied")
	}
	// A link within the mirror, and a loop, are fine.
	m = mirror(map[string][]byte{"dev.tsv": good})
	os.WriteFile(filepath.Join(m, "test-data.tsv"), []byte("index\tsentence\n0\tok\n"), 0o644)
	os.Symlink(filepath.Join(m, "test-data.tsv"), filepath.Join(m, "sst2", "test.tsv"))
	os.Symlink(filepath.Join(m, "sst2"), filepath.Join(m, "sst2", "loop"))
	root3 := t.TempDir()
	if err := Fetch(context.Background(), a, root3, FetchOptions{Mirror: m}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root3, "sst2", "test.tsv")); err != nil || !strings.Contains(string(b), "ok") {
		t.Errorf("link within the mirror: %q %v", b, err)
	}
}

// TestFetchNotFound: a 404 is reported as not found at once, not retried
// as an interrupted download.
func TestFetchNotFound(t *testing.T) {
	var requests int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		http.NotFound(w, r)
	}))
	defer ts.Close()
	var log bytes.Buffer
	err := Fetch(context.Background(), artifact(ts.URL+"/gone.zip", ""), t.TempDir(), FetchOptions{Retries: 3, Log: &log})
	if err == nil || !strings.Contains(err.Error(), "not found (404 Not Found)") || strings.Contains(err.Error()+log.String(), "resum") || requests != 1 {
		t.Errorf("404: %v (%d requests)\n%s", err, requests, log.String())
	}
}

// TestFetchNoChecksumResume: without a published checksum a partial file
// is resumed only with a validator the server confirms (If-Range);
// without one, or when the file changed, the download starts again.
func TestFetchNoChecksumResume(t *testing.T) {
	v1, v2 := []byte(strings.Repeat("version one ", 5000)), []byte(strings.Repeat("VERSION TWO ", 5000))
	srv := &server{body: v1, etag: `"v1"`}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	a := artifact(ts.URL+"/f.zip", "")
	a.Unpack = false
	get := func(root string) []byte {
		err := Fetch(context.Background(), a, root, FetchOptions{})
		if err != nil && !strings.Contains(err.Error(), "only if the server confirms the file unchanged") {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(root, "sst2/SST-2.zip"))
		return b
	}
	// Interrupted, then resumed with If-Range: the server confirms it.
	root := t.TempDir()
	srv.cutAfter = 1000
	get(root)
	if got := get(root); !bytes.Equal(got, v1) || srv.ranges[1] != "bytes=1000-" || srv.ifRanges[1] != `"v1"` {
		t.Errorf("resume with a validator: %d bytes, requests %q %q", len(got), srv.ranges, srv.ifRanges)
	}
	// Interrupted, then the file changes: the server sends it whole.
	root = t.TempDir()
	srv.cutAfter = 1000
	get(root)
	srv.mu.Lock()
	srv.body, srv.etag = v2, `"v2"`
	srv.mu.Unlock()
	if got := get(root); !bytes.Equal(got, v2) {
		t.Errorf("a changed file was spliced onto the old partial bytes (%d bytes)", len(got))
	}
	// A partial file without any validator is not resumed blindly.
	root = t.TempDir()
	os.MkdirAll(filepath.Join(root, "sst2"), 0o755)
	os.WriteFile(filepath.Join(root, "sst2/SST-2.zip.part"), []byte("stale bytes of unknown origin"), 0o644)
	n := len(srv.ranges)
	if got := get(root); !bytes.Equal(got, v2) || srv.ranges[n] != "" {
		t.Errorf("unvalidated partial file resumed: ranges %q, %d bytes", srv.ranges[n:], len(got))
	}
}

func TestNoNetworkForUnpublished(t *testing.T) {
	a, _ := Find("twitter")
	err := Fetch(context.Background(), a, t.TempDir(), FetchOptions{Client: &http.Client{Transport: failTransport{t}}})
	if err == nil || !strings.Contains(err.Error(), "Kaggle") {
		t.Errorf("twitter without mirror: %v", err)
	}
}

type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.t.Error("network used")
	return nil, net.ErrClosed
}

func TestCatalogWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range All() {
		if seen[a.Name] {
			t.Errorf("duplicate name %s", a.Name)
		}
		seen[a.Name] = true
		if a.Kind != "dataset" && a.Kind != "embedding" && a.Kind != "checkpoint" {
			t.Errorf("%s: kind %q", a.Name, a.Kind)
		}
		if a.Kind == "checkpoint" { // a save_pretrained folder, as models.Bert reads it
			var names []string
			for _, f := range a.Files {
				if dir := path.Dir(f.Path); dir != "checkpoints/"+a.Name {
					t.Errorf("%s: %s is outside checkpoints/%s", a.Name, f.Path, a.Name)
				}
				names = append(names, path.Base(f.Path))
			}
			for _, need := range []string{"config.json", "vocab.txt", "model.safetensors"} {
				if !slices.Contains(names, need) {
					t.Errorf("%s: no %s", a.Name, need)
				}
			}
		}
		if a.Dataset != "" {
			if _, err := datasets.SpecOf(a.Dataset); err != nil {
				t.Errorf("%s: %v", a.Name, err)
			}
		}
		for _, f := range a.Files {
			if f.Sum != "" {
				if _, _, err := splitSum(f.Sum); err != nil {
					t.Errorf("%s: %v", a.Name, err)
				}
			}
			if f.URL != "" && !strings.HasPrefix(f.URL, "https://") {
				t.Errorf("%s: %s is not https", a.Name, f.URL)
			}
		}
	}
}

// TestEveryCorpusCatalogued: every published corpus xp loads (not a
// user's own data) has its catalog entry, so that `xp data get` fetches
// it (docs/extending.md, a dataset).
func TestEveryCorpusCatalogued(t *testing.T) {
	for _, s := range datasets.Specs() {
		if s.Own {
			continue
		}
		if !slices.ContainsFunc(All(), func(a Artifact) bool { return a.Dataset == s.Name }) {
			t.Errorf("corpus %s has no catalog entry (an Artifact with Dataset %q)", s.Name, s.Name)
		}
	}
}

// TestRealSums verifies the catalog's checksums of files the shared data
// folder holds, byte for byte.
func TestRealSums(t *testing.T) {
	root := realdata.Root(t)
	n := 0
	for _, s := range List(root, true) {
		if s.Path != "" && s.File.Sum != "" && s.Path == s.File.Local(root) {
			n++
			if s.Check != "verified" {
				t.Errorf("%s: %s", s.Path, s.Check)
			}
		}
	}
	t.Logf("%d files verified against the catalog", n)
	if n == 0 {
		t.Skip("SKIP: no catalogued file with a checksum under the data root")
	}
}

// TestRealMirrorLayout: the data root's extracted SST-2, QNLI and tweets
// copy from it as from a mirror, every file verified against the
// catalog's checksums of the published files.
func TestRealMirrorLayout(t *testing.T) {
	mirror := datasets.RootFromEnv()
	if mirror == "" {
		t.Skip("SKIP: XP_DATA is not set; real-data test not run")
	}
	for name, want := range map[string]string{"sst2": "3 files verified", "qnli": "2 files verified", "twitter": "checksum verified (sha256)"} {
		a, _ := Find(name)
		var log bytes.Buffer
		if err := Fetch(context.Background(), a, t.TempDir(), FetchOptions{Mirror: mirror, Log: &log}); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(log.String(), want) {
			t.Errorf("%s: %s", name, log.String())
		}
	}
}

// TestUnpackBounded: an archive unpacks to at most MaxUnpacked bytes and
// MaxMembers files (a 10 KB zip of 10 MB of zeros against a 1 MB bound;
// SST-2's three files against two); a member that would pass for xp's
// mark of an extraction is refused. A refused extraction leaves no
// temporary file and no mark of a finished one, so the next Fetch unpacks
// again; what it wrote is a partial tree, which the loader refuses, naming
// the command that completes it (it was read as the corpus), until a
// Fetch completes it.
func TestUnpackBounded(t *testing.T) {
	for _, c := range []struct {
		name string
		body []byte
		opt  FetchOptions
		want string
	}{
		{"bytes", sst2Zip(t, "SST-2/zeros.tsv", strings.Repeat("\x00", 10<<20)), FetchOptions{MaxUnpacked: 1 << 20}, "more than 1048576 bytes unpacked"},
		{"members", sst2Zip(t), FetchOptions{MaxMembers: 2}, "more than 2 files"},
		{"mark", sst2Zip(t, "SST-2/.xp-unpacked-SST-2.zip", "x"), FetchOptions{}, "would pass for xp's mark"},
		{"unpacking mark", sst2Zip(t, "SST-2/"+datasets.Unpacking, "x"), FetchOptions{}, "would pass for xp's mark"},
	} {
		ts := httptest.NewServer(&server{body: c.body})
		root := t.TempDir()
		err := Fetch(context.Background(), artifact(ts.URL+"/x.zip", ""), root, c.opt)
		ts.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
			continue
		}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(p, ".tmp") || strings.HasSuffix(p, ".part") || strings.HasPrefix(d.Name(), ".xp-unpacked-")) {
				t.Errorf("%s: %s left after the refused extraction", c.name, p)
			}
			return nil
		})
		if _, err := datasets.Load(context.Background(), root, "sst2", datasets.Options{}); err == nil || !strings.Contains(err.Error(), "partly unpacked") || !strings.Contains(err.Error(), "`xp data get sst2` completes it") {
			t.Errorf("%s: the partial tree loaded: %v", c.name, err)
		}
	}
	// A partial tree completed by the next Fetch loads.
	ts := httptest.NewServer(&server{body: sst2Zip(t)})
	defer ts.Close()
	root := t.TempDir()
	if err := Fetch(context.Background(), artifact(ts.URL+"/x.zip", ""), root, FetchOptions{MaxMembers: 2}); err == nil {
		t.Fatal("three files under a bound of two: no error")
	}
	if err := Fetch(context.Background(), artifact(ts.URL+"/x.zip", ""), root, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, err := datasets.Load(context.Background(), root, "sst2", datasets.Options{}); err != nil || len(d.Splits["train"]) == 0 {
		t.Errorf("completed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "sst2", datasets.Unpacking)); err == nil {
		t.Error("the mark of an extraction under way is left after it finished")
	}
}

// TestListSymlinkedLayout: a dataset folder that is a symbolic link to
// its extracted layout (a shared copy linked into a user's data root) is
// listed with the size of the files it holds, not of the link itself;
// a file inside it that is a link counts its target's bytes.
func TestListSymlinkedLayout(t *testing.T) {
	shared, root := t.TempDir(), t.TempDir()
	body := "sentence\tlabel\ngood film\t1\n"
	for _, f := range []string{"train.tsv", "dev.tsv"} {
		if err := os.WriteFile(filepath.Join(shared, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := filepath.Join(t.TempDir(), "test.tsv")
	if err := os.WriteFile(elsewhere, []byte("index\tsentence\n0\tfine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(shared, "test.tsv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, filepath.Join(root, "sst2")); err != nil {
		t.Fatal(err)
	}
	want := int64(2*len(body) + len("index\tsentence\n0\tfine\n"))
	for _, s := range List(root, false) {
		if s.Artifact.Name != "sst2" {
			continue
		}
		if s.Check != "extracted layout (the loader reads it)" || s.Size != want {
			t.Errorf("sst2 through a link: %q, %d bytes; want the extracted layout, %d bytes", s.Check, s.Size, want)
		}
		return
	}
	t.Error("sst2 not listed")
}
