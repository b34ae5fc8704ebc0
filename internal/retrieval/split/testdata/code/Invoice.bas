Attribute VB_Name = "Invoice"
Option Explicit

Private Type LineItem
    Description As String
    Amount As Currency
End Type

Public Enum InvoiceState
    Draft = 0
    Sent = 1
End Enum

Private mLines() As LineItem
Private mCount As Long

Public Sub AddLine(ByVal Description As String, ByVal Amount As Currency)
    ReDim Preserve mLines(mCount)
    mLines(mCount).Description = Description
    mLines(mCount).Amount = Amount
    mCount = mCount + 1
End Sub

Public Function Total() As Currency
    Dim i As Long
    For i = 0 To mCount - 1
        Total = Total + mLines(i).Amount
    Next i
End Function

Public Property Get Count() As Long
    Count = mCount
End Property

Private Function Label(ByVal State As InvoiceState) As String
    Select Case State
    Case Draft
        Label = "draft"
    Case Else
        Label = "sent"
    End Select
End Function
