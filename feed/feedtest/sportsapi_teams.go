package feedtest

import (
	"fmt"

	"github.com/feedkit/feedkit/feed"
)

// The simulator's teams and players: every match gets two of a fixed list of teams,
// derived from its id, and every team a squad of players, so that the same match, team or
// player always has the same names.

var teamNames = []string{
	"Northbridge United", "Riverside Rovers", "Eastwick Athletic", "Kingsport City",
	"Ashford Wanderers", "Millbrook Town", "Harbour Vale", "Stonegate Albion",
	"Westfield Rangers", "Oakmere Borough", "Lakeside Dynamo", "Fairhaven Forest",
	"Redcliffe Villa", "Brampton Olympic", "Ironbridge Sporting", "Glenwood Celtic",
	"Porthaven FC", "Silverton Harriers", "Thornbury Park", "Cresthill Palace",
	"Marlow Heath", "Dunmore Academicals", "Highgate Corinthians", "Elmstead Swifts",
}

var teamCountries = [][2]string{{"England", "ENG"}, {"Scotland", "SCO"}, {"Wales", "WAL"}, {"Ireland", "IRL"}}

var (
	playerFirstNames = []string{"James", "Lukas", "Mateo", "Noah", "Oliver", "Elias", "Leon", "Hugo", "Finn", "Luca", "Adam", "Jonas", "Milan", "Theo", "Samuel", "Tomas", "Erik", "Felix", "Marco", "Daniel"}
	playerLastNames  = []string{"Hartley", "Brennan", "Kowalski", "Lindqvist", "Moreau", "Okafor", "Petrov", "Quinn", "Ramos", "Schneider", "Tanaka", "Underwood", "Varga", "Walsh", "Yilmaz", "Zeller", "Abbott", "Castillo", "Dahl", "Novak"}
	playerPositions  = []string{"goalkeeper", "defender", "defender", "defender", "defender", "midfielder", "midfielder", "midfielder", "forward", "forward", "forward"}
)

const (
	competitorBase = 4001  // sr:competitor:4001 is teamNames[0]
	playerBase     = 60001 // sr:player:60001 is the first player of teamNames[0]
	squadSize      = 22
	squadStride    = 25 // player ids of one team: playerBase + team*squadStride + [0, squadSize)
)

// matchTeams returns the home and away teams of match id, as indexes of teamNames.
func matchTeams(id int64) (home, away int) {
	n := int64(len(teamNames))
	h := (id * 7) % n
	a := (h + 1 + id%(n-1)) % n
	return int(h), int(a)
}

func competitorURN(team int) feed.URN {
	return feed.URN{Prefix: "sr", Type: "competitor", ID: int64(competitorBase + team)}
}

// teamOf returns the team a competitor URN names, if it is one of the simulator's.
func teamOf(u feed.URN) (int, bool) {
	t := int(u.ID - competitorBase)
	if u.Prefix != "sr" || u.Type != "competitor" || t < 0 || t >= len(teamNames) {
		return 0, false
	}
	return t, true
}

func teamAbbreviation(team int) string {
	return fmt.Sprintf("%.3s", teamNames[team])
}

type simPlayer struct {
	urn         feed.URN
	team, index int
	first, last string
	position    string
}

// playerOf returns the player a player URN names, if it is one of the simulator's.
func playerOf(u feed.URN) (simPlayer, bool) {
	off := u.ID - playerBase
	if u.Prefix != "sr" || u.Type != "player" || off < 0 {
		return simPlayer{}, false
	}
	team, index := int(off/squadStride), int(off%squadStride)
	if team >= len(teamNames) || index >= squadSize {
		return simPlayer{}, false
	}
	return squadPlayer(team, index), true
}

func squadPlayer(team, index int) simPlayer {
	return simPlayer{
		urn:      feed.URN{Prefix: "sr", Type: "player", ID: int64(playerBase + team*squadStride + index)},
		team:     team,
		index:    index,
		first:    playerFirstNames[(team*7+index*3)%len(playerFirstNames)],
		last:     playerLastNames[(team*11+index*13)%len(playerLastNames)],
		position: playerPositions[index%len(playerPositions)],
	}
}

// name is the player's name as the API gives it: "Last, First".
func (p simPlayer) name() string { return p.last + ", " + p.first }

var sportNames = map[int][2]string{
	1: {"Soccer", "Fußball"},
	2: {"Basketball", "Basketball"},
	3: {"Baseball", "Baseball"},
	4: {"Ice Hockey", "Eishockey"},
	5: {"Tennis", "Tennis"},
}
