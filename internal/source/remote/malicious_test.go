package remote

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestFetchRefusesUnsafeTarEntries(t *testing.T) {
	archive := tarGz(t, []tarFile{
		{Name: "docs/ok.md", Body: "# OK\n"},
		{Name: "../../etc/passwd", Body: "root:x:0:0"},
		{Name: "docs/../../escape.md", Body: "# escape"},
		{Name: "/etc/abs.md", Body: "# abs"},
		{Name: "C:/Windows/drive.md", Body: "# drive"},
		{Name: `D:\evil.md`, Body: "# drive"},
		{Name: "docs/link.md", Type: tar.TypeSymlink, Link: "/etc/passwd"},
		{Name: "docs/hard.md", Type: tar.TypeLink, Link: "docs/ok.md"},
		{Name: "docs/dev.md", Type: tar.TypeChar},
		{Name: "docs/fifo.md", Type: tar.TypeFifo},
		{Name: "docs/ignored-link", Type: tar.TypeSymlink, Link: "/"},
	})
	srv, _ := serveBody(t, archive, "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz"})
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"s/docs/ok.md"}) {
		t.Errorf("ids %v, want only the safe file", got)
	}
	for doc, want := range map[string]string{
		"s/../../etc/passwd":     "leaves the archive root",
		"s/docs/../../escape.md": "leaves the archive root",
		"s//etc/abs.md":          "absolute",
		"s/C:/Windows/drive.md":  "drive letter",
		`s/D:\evil.md`:           "drive letter",
		"s/docs/link.md":         "symbolic link to /etc/passwd is not followed",
		"s/docs/hard.md":         "hard link to docs/ok.md is not followed",
		"s/docs/dev.md":          "character device is not read",
		"s/docs/fifo.md":         "named pipe is not read",
	} {
		wantContains(t, errorFor(t, res, doc).Message, want)
	}
	if len(res.Errors) != 9 {
		t.Errorf("errors %v, want 9 (a link Include does not select is skipped silently)", res.Errors)
	}
}

func TestFetchRefusesUnsafeZipEntries(t *testing.T) {
	archive := zipOf(t, []zipFile{
		{Name: "ok.md", Body: "# OK"},
		{Name: "../evil.md", Body: "# evil"},
		{Name: "/abs.md", Body: "# abs"},
		{Name: "link.md", Body: "/etc/passwd", Mode: fs.ModeSymlink},
		{Name: "pipe.md", Mode: fs.ModeNamedPipe},
	})
	srv, _ := serveBody(t, archive, "")
	res := fetchOK(t, "z", Spec{URL: srv.URL + "/a.zip", TempDir: t.TempDir()})
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"z/ok.md"}) {
		t.Errorf("ids %v", got)
	}
	for doc, want := range map[string]string{
		"z/../evil.md": "leaves the archive root",
		"z//abs.md":    "absolute",
		"z/link.md":    "symbolic link is not followed",
		"z/pipe.md":    "named pipe is not read",
	} {
		wantContains(t, errorFor(t, res, doc).Message, want)
	}
}

func TestFetchRefusesBadFilesOneByOne(t *testing.T) {
	archive := tarGz(t, []tarFile{
		{Name: "good.md", Body: "# Good\n"},
		{Name: "big.md", Body: strings.Repeat("b", 101)},
		{Name: "exact.txt", Body: strings.Repeat("e", 100)},
		{Name: "binary.md", Body: "abc\x00def"},
		{Name: "latin1.txt", Body: "caf\xe9"},
		{Name: "bad.jsonl", Body: `{"id":"x","text":"x"}` + "\n" + `{"text":"no id"}`},
		{Name: "dup.jsonl", Body: `{"id":"good.md","text":"clash"}`},
	})
	srv, _ := serveBody(t, archive, "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz", MaxFileBytes: 100})
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"s/exact.txt", "s/good.md"}) {
		t.Errorf("ids %v, want the good file and the one at the limit", got)
	}
	for doc, want := range map[string]string{
		"s/big.md":     "over the 100-byte limit (MaxFileBytes)",
		"s/binary.md":  "binary file (NUL byte at offset 3)",
		"s/latin1.txt": "invalid UTF-8 at byte offset 3",
		"s/bad.jsonl":  `line 2: a document needs "id"`,
		"s/dup.jsonl":  `document id "s/good.md" is also the id of a document in good.md`,
	} {
		wantContains(t, errorFor(t, res, doc).Message, want)
	}
}

func TestFetchOversizedSingleFile(t *testing.T) {
	srv, _ := serveBody(t, bytes.Repeat([]byte("a"), 2000), "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/big.txt", MaxFileBytes: 1000})
	if len(res.Documents) != 0 || res.Bytes != 2000 {
		t.Errorf("documents %v bytes %d", ids(res.Documents), res.Bytes)
	}
	wantContains(t, errorFor(t, res, "s/big.txt").Message, "MaxFileBytes")
}

func TestFetchTooManyFiles(t *testing.T) {
	files := regular("a.md", "a", "b.md", "b", "c.md", "c")
	for i := 0; i < 20; i++ {
		files = append(files, tarFile{Name: "skip/" + strings.Repeat("x", i+1) + ".yaml"})
	}
	srv, _ := serveBody(t, tarGz(t, files), "")
	if res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz", MaxFiles: 3}); len(res.Documents) != 3 {
		t.Errorf("at the limit: documents %v (entries Include skips do not count)", ids(res.Documents))
	}
	_, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.tgz", MaxFiles: 2})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v, want ErrLimit", err)
	}
	wantContains(t, err.Error(), "more than 2 files", "MaxFiles")
}

// gzipBomb is a gzipped tar holding one file of size zero bytes, made of
// one compressed MiB of zeros repeated (gzip members concatenate), so it
// is built and served cheaply: about 1 KiB per MiB unpacked.
func gzipBomb(t *testing.T, mib int) []byte {
	t.Helper()
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "bomb.md", Mode: 0o644, Size: int64(mib) << 20, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	out := gz(t, hdr.Bytes()) // the header block; tw is not closed on purpose
	zeros := gz(t, make([]byte, 1<<20))
	for i := 0; i < mib; i++ {
		out = append(out, zeros...)
	}
	return append(out, gz(t, make([]byte, 1024))...) // end-of-archive blocks
}

func TestFetchStopsGzipBombEarly(t *testing.T) {
	bomb := gzipBomb(t, 4096) // 4 GiB unpacked, about 4 MiB served
	srv, _ := serveBody(t, bomb, "")
	transport := &countingTransport{}
	c := &http.Client{Transport: transport}
	limit := int64(4 << 20)
	_, err := Fetch(t.Context(), c, "s", Spec{URL: srv.URL + "/a.tgz", MaxTotalBytes: limit})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v, want ErrLimit", err)
	}
	wantContains(t, err.Error(), "unpacked archive is over 4194304 bytes")
	if read := transport.read.Load(); read > 256<<10 {
		t.Errorf("read %d of %d compressed bytes before stopping, want at most 256 KiB", read, len(bomb))
	}
}

func TestFetchStopsZipBomb(t *testing.T) {
	zeros := strings.Repeat("\x00", 600<<10)
	archive := zipOf(t, []zipFile{{Name: "a.txt", Body: zeros}, {Name: "b.txt", Body: zeros}, {Name: "c.txt", Body: zeros}})
	srv, _ := serveBody(t, archive, "")
	_, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.zip", MaxTotalBytes: 1 << 20, TempDir: t.TempDir()})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v, want ErrLimit", err)
	}
	wantContains(t, err.Error(), "unpacked archive")
}

func TestFetchDownloadLimit(t *testing.T) {
	body := bytes.Repeat([]byte("a"), 3000)
	for _, tt := range []struct {
		name    string
		chunked bool
		want    string
	}{
		{"declared length", false, "download is 3000 bytes, over 2000 bytes"},
		{"streamed", true, "download is over 2000 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if !tt.chunked {
					w.Header().Set("Content-Length", "3000")
				}
				for i := 0; i < 3; i++ {
					_, _ = w.Write(body[i*1000 : (i+1)*1000])
					w.(http.Flusher).Flush()
				}
			}))
			_, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.txt", MaxTotalBytes: 2000})
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("err %v, want ErrLimit", err)
			}
			wantContains(t, err.Error(), tt.want, "MaxTotalBytes")
		})
	}
}

func TestFailMatchesTheContextError(t *testing.T) {
	s, err := Spec{URL: "https://example.com/a.tgz?sig=x"}.settle()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = s.fail(ctx, errors.New("read tcp: use of closed network connection"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want it to match context.Canceled", err)
	}
	wantContains(t, err.Error(), "remote source https://example.com/a.tgz: context canceled (read tcp")
}
