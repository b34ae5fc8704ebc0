package org.example.ledger;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/** A ledger of entries that always balances. */
public class Ledger {
    private final List<Entry> entries = new ArrayList<>();
    private BigDecimal balance = BigDecimal.ZERO;

    /** One posting: an account, an amount and a memo. */
    public static final class Entry {
        final String account;
        final BigDecimal amount;
        final String memo;

        Entry(String account, BigDecimal amount, String memo) {
            this.account = account;
            this.amount = amount;
            this.memo = memo;
        }
    }

    public void post(String account, BigDecimal amount, String memo) {
        if (amount.signum() == 0) {
            throw new IllegalArgumentException("zero posting to " + account);
        }
        entries.add(new Entry(account, amount, memo));
        balance = balance.add(amount);
    }

    public BigDecimal balanceOf(String account) {
        BigDecimal sum = BigDecimal.ZERO;
        for (Entry e : entries) {
            if (e.account.equals(account)) {
                sum = sum.add(e.amount);
            }
        }
        return sum;
    }

    protected boolean balanced() {
        return balance.signum() == 0;
    }

    private static String format(Entry e) {
        switch (e.amount.signum()) {
            case 1:
                return "DR " + e.account + " " + e.amount;
            default:
                return "CR " + e.account + " " + e.amount.negate();
        }
    }

    static List<String> journal(Ledger l) {
        List<String> out = new ArrayList<>();
        for (Entry e : l.entries) {
            out.add(format(e));
        }
        return out;
    }
}
