package refstore

import (
	"fmt"
	"testing"
)

// BenchmarkPlumbing sets what each reading and writing primitive costs when
// git-liza reads git's files itself against when it goes through git's
// plumbing (liza.readThroughGit, the path of formats it does not know), in
// both object formats:
//
//	go test -run '^$' -bench Plumbing -benchtime 200x ./refstore
func BenchmarkPlumbing(b *testing.B) {
	for _, m := range allModes {
		b.Run(m.name, func(b *testing.B) {
			old := mode
			mode = m
			defer func() { mode = old }()
			benchPrimitives(b)
		})
	}
}

func benchPrimitives(b *testing.B) {
	gitEnv(b)
	dir := b.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", "--object-format=" + mode.format},
		{"commit", "-q", "--allow-empty", "-m", "first"},
	} {
		if _, err := runGit(dir, nil, nil, args...); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	head, _, err := r.ReadRef("refs/heads/main")
	if err != nil {
		b.Fatal(err)
	}
	blob, err := r.WriteBlob([]byte("a blob of the blackboard\n"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Open", func(b *testing.B) {
		for b.Loop() {
			r, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("ReadRef", func(b *testing.B) {
		for b.Loop() {
			if _, ok, err := r.ReadRef("refs/heads/main"); err != nil || !ok {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadCommit", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.ReadCommit(head); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadBlob", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.ReadBlob(blob); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteBlob", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := r.WriteBlob(fmt.Appendf(nil, "blob %d\n", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
