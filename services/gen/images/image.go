package main

import (
	"fmt"
	"strconv"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the image's user and group.
var User = strconv.Itoa(UID) + ":" + strconv.Itoa(UID)

// Env is every image's environment: no SSL_CERT_FILE (the image has no CA
// bundle: the binaries carry their roots) and no TZ (the binaries log in
// UTC; they carry the time zones).
var Env = []string{"PATH=" + BinDir}

// image is bin's image for platform p: the base layer (the files every
// image has), then the binary's layer; run as User, the binary as
// entrypoint, bin's ports exposed, labelled with src.
func image(p v1.Platform, bin Binary, base, binLayer v1.Layer, src Source) (v1.Image, error) {
	created := v1.Time{Time: src.Time}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "pacer images: /etc/passwd, /etc/group, /home/nonroot, /tmp"}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: created, CreatedBy: "pacer images: " + Entrypoint(bin.Name)}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = created
	cf.Config = v1.Config{
		Entrypoint: []string{Entrypoint(bin.Name)},
		User:       User,
		Env:        Env,
		WorkingDir: "/",
		Labels:     src.Labels(bin.Name),
	}
	for _, port := range bin.Ports {
		if cf.Config.ExposedPorts == nil {
			cf.Config.ExposedPorts = map[string]struct{}{}
		}
		cf.Config.ExposedPorts[fmt.Sprintf("%d/tcp", port)] = struct{}{}
	}
	return mutate.ConfigFile(img, cf)
}

// index is the OCI image index of imgs, one per platform, in the order
// given.
func index(imgs []v1.Image, platforms []v1.Platform) v1.ImageIndex {
	adds := make([]mutate.IndexAddendum, len(imgs))
	for i, img := range imgs {
		p := platforms[i]
		adds[i] = mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}}
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
}
