package webui

//go:generate go run ./internal/vendorgen
