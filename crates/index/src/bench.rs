pub struct BenchParams;
