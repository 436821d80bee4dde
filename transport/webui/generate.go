package webui

//go:generate go run ../../internal/cmd/vendorgen
