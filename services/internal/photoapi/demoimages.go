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
// hue comes from the key) with a visible PREVIEW watermark at dir/<key>
// for each key, standing in for the processed previews a CDN or bucket
// serves: serve dir and set the image base URL to it. Existing files are
// overwritten.
func WriteDemoImages(dir string, keys []string) error { return writeDemoImages(dir, keys, true) }

// WriteDemoOriginals writes the originals WriteDemoImages's previews stand
// for: the same image without the watermark, at dir/<key> for each (raw)
// key. Serve dir only through OriginalsHandler.
func WriteDemoOriginals(dir string, keys []string) error { return writeDemoImages(dir, keys, false) }

func writeDemoImages(dir string, keys []string, watermark bool) error {
	for _, key := range keys {
		path := filepath.Join(dir, filepath.FromSlash(key))
		if !filepath.IsLocal(filepath.FromSlash(key)) {
			return fmt.Errorf("photoapi: demo image key %q leaves the folder", key)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := writeDemoImage(path, key, watermark); err != nil {
			return err
		}
	}
	return nil
}

func writeDemoImage(path, key string, watermark bool) (err error) {
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
	if watermark {
		drawWatermark(img)
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

// watermarkFont is a 5×7 bitmap of the letters of PREVIEW, a row a
// string.
var watermarkFont = map[rune][7]string{
	'P': {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."},
	'R': {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"},
	'E': {"#####", "#....", "#....", "####.", "#....", "#....", "#####"},
	'V': {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."},
	'I': {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "#####"},
	'W': {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "##.##", "#...#"},
}

// WatermarkText is what the demo previews' watermark says.
const WatermarkText = "PREVIEW"

// WatermarkRect is where drawWatermark writes on a 160×90 image: the
// letters at 3× scale, centred.
var WatermarkRect = image.Rect(80-len(WatermarkText)*18/2, 45-21/2, 80+len(WatermarkText)*18/2, 45-21/2+21)

// drawWatermark writes WatermarkText in white across img's centre.
func drawWatermark(img *image.RGBA) {
	const scale = 3
	x0, y0 := WatermarkRect.Min.X, WatermarkRect.Min.Y
	for i, r := range WatermarkText {
		for row, line := range watermarkFont[r] {
			for col, c := range line {
				if c != '#' {
					continue
				}
				for dy := range scale {
					for dx := range scale {
						img.Set(x0+i*6*scale+col*scale+dx, y0+row*scale+dy, color.RGBA{R: 255, G: 255, B: 255, A: 255})
					}
				}
			}
		}
	}
}
