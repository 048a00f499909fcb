#!/usr/bin/perl
# parallel.pl -- every Chinese page keeps step with its English twin.
#   usage: parallel.pl ZH_PAGE...      (the twin of X.zh.md is X.md)
# A page is cut into sections at its headings. The two pages must have
# the same headings (their levels, in order) and, section by section, the
# same number of blocks: a paragraph, a list item, a code block, a table
# and a quote each count one. A paragraph the translation lost or gained
# shows up as a section whose counts differ. One line per finding, naming
# the section; exit 1 if any.
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));

# sections FILE: a list of [heading level, heading text, block count].
sub sections {
    my ($file) = @_;
    open my $f, '<', $file or die "$file: $!\n";
    my @s = ([0, '(top)', 0]);
    my ($fence, $in_block, $in_table) = (0, 0, 0);
    while (my $line = <$f>) {
        chomp $line;
        if ($fence) { $fence = 0 if $line =~ /^\s*```/; next; }
        if ($line =~ /^\s*```/) { $fence = 1; $s[-1][2]++; $in_block = 0; next; }
        if ($line =~ /^(#+)\s+(.*)/) {
            push @s, [length $1, $2, 0];
            $in_block = 0;
            next;
        }
        if ($line =~ /^\s*$/) { $in_block = 0; $in_table = 0; next; }
        if ($line =~ /^\|/) {
            $s[-1][2]++ unless $in_table;
            $in_table = 1;
            $in_block = 1;
            next;
        }
        # A list item starts a block of its own, even without a blank line
        # before it; its continuation lines are indented.
        if ($line =~ /^\s*(?:[-*+]|\d+\.)\s/) { $s[-1][2]++; $in_block = 1; next; }
        next if $in_block;
        $s[-1][2]++;
        $in_block = 1;
    }
    close $f;
    return @s;
}

my $found = 0;
for my $zh (@ARGV) {
    (my $en = $zh) =~ s/\.zh\.md$/.md/;
    unless (-f $en) { print "$zh: no English twin $en\n"; $found++; next; }
    my @z = sections($zh);
    my @e = sections($en);
    my $zl = join ' ', map { $_->[0] } @z;
    my $el = join ' ', map { $_->[0] } @e;
    if ($zl ne $el) {
        print "$zh: headings differ from $en: ", scalar(@z) - 1, " against ",
            scalar(@e) - 1, " (levels $zl | $el)\n";
        $found++;
        next;
    }
    for my $i (0 .. $#z) {
        next if $z[$i][2] == $e[$i][2];
        print "$zh: section '$z[$i][1]' has $z[$i][2] blocks, '$e[$i][1]' in $en has $e[$i][2]\n";
        $found++;
    }
}
exit($found ? 1 : 0);
