package photoapi

import (
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
)

// WriteDemoImages writes a small generated JPEG (160×90, a gradient whose
// hue comes from the key) at dir/<key> for each key, standing in for the
// processed images a CDN or bucket serves: serve dir and set the image
// base URL to it. Existing files are overwritten.
func WriteDemoImages(dir string, keys []string) error {
	for _, key := range keys {
		path := filepath.Join(dir, filepath.FromSlash(key))
		if !filepath.IsLocal(filepath.FromSlash(key)) {
			return fmt.Errorf("photoapi: demo image key %q leaves the folder", key)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := writeDemoImage(path, key); err != nil {
			return err
		}
	}
	return nil
}

func writeDemoImage(path, key string) (err error) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key)) // a hash never fails
	sum := h.Sum32()
	base := color.RGBA{R: uint8(sum), G: uint8(sum >> 8), B: uint8(sum >> 16), A: 255}
	img := image.NewRGBA(image.Rect(0, 0, 160, 90))
	for y := range 90 {
		for x := range 160 {
			img.Set(x, y, color.RGBA{R: base.R/2 + uint8(x*127/160), G: base.G/2 + uint8(y*127/90), B: base.B, A: 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return jpeg.Encode(f, img, &jpeg.Options{Quality: 70})
}
