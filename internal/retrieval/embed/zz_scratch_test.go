package embed
import ("testing";"fmt")
func TestScratch(t *testing.T){
 for _, s := range []string{"Don't stop the Running dogs' owners! Alice's café naïve résumé", "Version 3.5 and v1.2.3, 1,000 10.0.0.1 end.", "state-of-the-art snake_case CamelCase", "東京は日本の首都です。カタカナ 한국어", "It's THE generously running-ness ﬁle ǅemal ΣΊΣΥΦΟΣ", "e\u0301cole x\u0301 \u0301y", "‘quoted’ text’s o’neil", "connection connections connected connecting relational"} {
  fmt.Printf("%q\n", Analyze(s))
 }
}
