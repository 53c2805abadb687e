//go:build !nofallback

package main

import _ "github.com/pacerhq/pacer/services/internal/fallback" // as every deployed binary
