package bm25

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// synthWords is a vocabulary of common English words, function words first so
// that a Zipf draw makes them the most frequent, as in real text.
var synthWords = strings.Fields(`
the of and to a in is that for it as was with be by on not he this are or
his from at which but have an they you were her she there been one all we
their has would when if so no will can more about said other into some
could time these two may then do first any my now such like our over man
me even most made after also did many before must through back years where
much your way well down should because each just those people how too little
state good very make world still own see men work long get here between both
life being under never day same another know while last might us great old
year off come since against go came right used take three states himself few
house use during without again place american around however home small found
thought went say part once general high upon school every don't does got
united left number course war until always away something fact though water
less public put think almost hand enough far took head yet government system
better set told nothing night end why called didn't eyes find going look
asked later knew point next program city business give group toward young
days let room president side social given present several order national
possible rather second face per among form important often things looking
early white case john become large big need four within felt along children
saw best church ever least power development light thing seemed family
interest want members mind country area others done turned although open
god service certain kind problem began different door thus help means sense
whole matter perhaps itself york times law human line above name example
action company hands local show whether five history gave today either act
feet across taken past quite anything seen having death experience body word
half really week field car words already themselves information tell together
college shall money period held keep sure probably free seems real behind cannot
miss political air question making office brought whose special major heard
problems ago became federal moment study available known result street
economic boy position reason change south board individual job society areas
west close turn love community true court force full seem am front
indexing retrieval embedding vectors parent child chunk operator cluster
kubernetes controller reconcile queries documents tokens analyzer stemming
`)

// synthSuffixes inflect content words so the vocabulary has morphological
// variants for the stemmer to conflate.
var synthSuffixes = []string{"s", "ed", "ing", "ly", "ness", "ation", "er", "ment", "'s"}

// syntheticTexts returns n deterministic English-like texts of about
// avgWords words each, with punctuation, capitals, contractions and numbers.
func syntheticTexts(n, avgWords int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(synthWords)-1))
	texts := make([]string, n)
	var b strings.Builder
	for i := range texts {
		b.Reset()
		words := avgWords/2 + r.IntN(avgWords+1)
		writeSentences(&b, r, zipf, words)
		texts[i] = b.String()
	}
	return texts
}

// writeSentences writes words words as sentences of 6 to 18 words.
func writeSentences(b *strings.Builder, r *rand.Rand, zipf *rand.Zipf, words int) {
	for w := 0; w < words; {
		length := min(6+r.IntN(13), words-w)
		for j := range length {
			if w+j > 0 {
				b.WriteByte(' ')
			}
			writeWord(b, r, zipf, j == 0)
			if j < length-1 && r.IntN(12) == 0 {
				b.WriteByte(',')
			}
		}
		b.WriteByte('.')
		w += length
	}
}

// writeWord writes one word, sometimes a number, capitalised if first.
func writeWord(b *strings.Builder, r *rand.Rand, zipf *rand.Zipf, first bool) {
	if r.IntN(40) == 0 {
		b.WriteString(strconv.Itoa(r.IntN(2000)))
		return
	}
	k := zipf.Uint64()
	w := synthWords[k]
	if k > 100 && r.IntN(3) == 0 {
		w += synthSuffixes[r.IntN(len(synthSuffixes))]
	}
	if first {
		b.WriteString(strings.ToUpper(w[:1]))
		w = w[1:]
	}
	b.WriteString(w)
}
