module Queue
  ( Queue
  , empty
  , push
  , pop
  ) where

import Data.List (foldl')
import qualified Data.Map as Map

-- | A queue made of two lists.
data Queue a = Queue [a] [a]
  deriving (Show)

newtype Name = Name String

type Size = Int

empty :: Queue a
empty = Queue [] []

push :: a -> Queue a -> Queue a
push x (Queue f b) = Queue f (x : b)

pop :: Queue a -> Maybe (a, Queue a)
pop (Queue [] []) = Nothing
pop (Queue [] b) = pop (Queue (reverse b) [])
pop (Queue (x : f) b) = Just (x, Queue f b)

class Container f where
  size :: f a -> Int

instance Container Queue where
  size (Queue f b) = length f + length b

main :: IO ()
main = do
  let q = foldl' (flip push) empty [1 .. 5 :: Int]
  case pop q of
    Just (x, _) -> print x
    Nothing -> putStrLn "empty"
