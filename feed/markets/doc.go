// Package markets gives market and outcome names: it reads market descriptions, variant
// lists, event summaries and player profiles from the Sports API, keeps them in bounded
// caches, and renders the descriptions' name templates with a market line's specifiers.
//
// A listener asks for names when it needs them; decoding a message never waits for them.
package markets
