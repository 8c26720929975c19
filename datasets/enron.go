package datasets

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// sentFolders are the CMU release's sent-mail folder names (at any depth
// below a user: scholtes-d keeps diana_scholtes/saved_sent).
var sentFolders = map[string]bool{"sent": true, "sent_items": true, "_sent_mail": true, "saved_sent": true}

// loadEnron reads the CMU maildir layout, maildir/<user>/<folder>/<n>., as
// authorship classification over the opt.EnronUsers (default 10) users
// with the most distinct sent messages. The rules, in order:
//
//  1. Only sent-mail folders are read (sent, sent_items, _sent_mail,
//     saved_sent).
//  2. A user's address is the From address of most of their sent mail;
//     messages From anyone else (an assistant) are dropped.
//  3. The body is cut at the first quoted or forwarded block (see
//     StripQuoted); an empty remainder drops the message.
//  4. Messages are deduplicated per user on the body with white space
//     collapsed (sent and _sent_mail hold copies under different
//     Message-IDs); the first in path order is kept.
//  5. The users with the most remaining messages are the labels (ties by
//     name), in alphabetical order.
//
// Everything lands in split "train"; the standard carving moves 10% of
// each author's mail to "test".
func loadEnron(ctx context.Context, dir string, opt Options) (*Dataset, error) {
	n := opt.EnronUsers
	if n == 0 {
		n = 10
	}
	users, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type user struct {
		name string
		ex   []Example
	}
	var all []user
	for _, u := range users {
		if !u.IsDir() || strings.HasPrefix(u.Name(), ".") {
			continue
		}
		ex, err := enronUser(ctx, dir, u.Name())
		if err != nil {
			return nil, err
		}
		if len(ex) > 0 {
			all = append(all, user{u.Name(), ex})
		}
	}
	if len(all) < 2 {
		return nil, fmt.Errorf("%s: %d users with sent mail; authorship needs at least 2", dir, len(all))
	}
	slices.SortFunc(all, func(a, b user) int {
		if c := cmp.Compare(len(b.ex), len(a.ex)); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	if len(all) > n {
		all = all[:n]
	}
	slices.SortFunc(all, func(a, b user) int { return cmp.Compare(a.name, b.name) })
	d := &Dataset{Splits: map[string][]Example{}}
	for i, u := range all {
		d.Labels = append(d.Labels, u.name)
		for _, e := range u.ex {
			e.Label = i
			d.Splits["train"] = append(d.Splits["train"], e)
		}
	}
	return d, nil
}

type message struct {
	path, from, body string
}

func enronUser(ctx context.Context, root, user string) ([]Example, error) {
	var msgs []message
	err := filepath.WalkDir(filepath.Join(root, user), func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !sentFolders[filepath.Base(filepath.Dir(p))] {
			return err
		}
		if err := checkCtx(ctx, len(msgs)); err != nil {
			return err
		}
		m, err := readMessage(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m.path = filepath.ToSlash(rel)
		msgs = append(msgs, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Rule 2: the user's own address is the most common sender.
	count := map[string]int{}
	for _, m := range msgs {
		count[m.from]++
	}
	own := ""
	for _, a := range sortedKeys(count) {
		if count[a] > count[own] {
			own = a
		}
	}
	seen := map[string]bool{}
	var out []Example
	for _, m := range msgs { // WalkDir visits in lexical order
		body := StripQuoted(m.body)
		key := strings.Join(strings.Fields(body), " ")
		if m.from != own || key == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, Example{ID: m.path, Text: body})
	}
	return out, nil
}

// readMessage parses one RFC 822 file (CRLF or LF line endings).
func readMessage(path string) (message, error) {
	b, err := xio.ReadFileMax(path, xio.MaxText)
	if err != nil {
		return message{}, err
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	m, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		return message{}, srcerr.At(path, 0, "not an RFC 822 message: %w", err)
	}
	body, err := io.ReadAll(m.Body)
	if err != nil {
		return message{}, srcerr.At(path, 0, "read body: %w", err)
	}
	from := strings.ToLower(strings.TrimSpace(m.Header.Get("From")))
	if a, err := mail.ParseAddress(from); err == nil {
		from = strings.ToLower(a.Address)
	}
	if from == "" {
		return message{}, srcerr.At(path, 0, "no From header")
	}
	return message{from: from, body: latin1IfInvalid(body)}, nil
}

// quoteStart matches the first line of a quoted reply or forwarded block
// in Enron mail: Outlook's "-----Original Message-----", Lotus Notes'
// "---------------------- Forwarded by …" and "… on 05/01/2001 10:00 AM"
// reply headers, and header lines (From:, To:, Sent:, cc:, Subject:)
// inside a body, which start every pasted message.
var quoteStart = regexp.MustCompile(`(?im)^[ \t>]*(?:-+ *Original Message *-+|-+ *Forwarded by|-+ *Inline attachment follows|(?:From|To|Sent|Cc|Subject|Date): |.+ on \d\d?/\d\d?/\d{2,4} \d\d?:\d\d(?::\d\d)? ?[AP]M)`)

// StripQuoted returns the part of an e-mail body its author wrote: the
// text before the first quoted reply or forwarded block, with lines
// starting with '>' removed and surrounding white space trimmed.
func StripQuoted(body string) string {
	if loc := quoteStart.FindStringIndex(body); loc != nil {
		body = body[:loc[0]]
	}
	var keep []string
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), ">") {
			keep = append(keep, strings.TrimRight(l, " \t"))
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// enronSpec is the enron corpus (Specs).
var enronSpec = Spec{Name: "enron", Title: "CMU Enron email, authorship of sent mail", Attacker: "authorship", Splits: "train; 10% of each author's mail carved as test",
	Carve: []Carving{{"train", "test", 0.1}}, Default: []string{"enron/maildir", "maildir", "enron"}, load: loadEnron}
