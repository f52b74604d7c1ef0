//go:build !unix

package refstore

import (
	"errors"
	"os"
)

// mapFile does not map files here: packs are read with positioned reads.
func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) error { return nil }
