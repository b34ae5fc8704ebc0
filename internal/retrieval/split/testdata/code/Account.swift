import Foundation

enum AccountError: Error {
    case insufficientFunds(needed: Decimal)
}

struct Transaction {
    let amount: Decimal
    let date: Date
}

class Account {
    private(set) var balance: Decimal = 0
    private var history: [Transaction] = []

    func deposit(_ amount: Decimal) {
        balance += amount
        history.append(Transaction(amount: amount, date: Date()))
    }

    func withdraw(_ amount: Decimal) throws {
        if amount > balance {
            throw AccountError.insufficientFunds(needed: amount - balance)
        }
        balance -= amount
    }
}

func summary(_ a: Account) -> String {
    switch a.balance {
    case 0:
        return "empty"
    default:
        return "balance \(a.balance)"
    }
}
