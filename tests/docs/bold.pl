#!/usr/bin/perl
# bold.pl -- every **bold** in the pages renders as bold in CommonMark.
#   usage: bold.pl PAGE...
# CommonMark opens emphasis only at a left-flanking "**" and closes it only
# at a right-flanking one (spec 0.31, "Emphasis and strong emphasis"). A
# closing "**" after punctuation must be followed by a space or more
# punctuation: "**你要写的：**4" shows its asterisks, "**你要写的**：4"
# is bold. Chinese text meets this rule at every full-width colon, which
# is why it is checked. Code spans and blocks are left out. One line per
# finding, "PAGE:LINE: ..."; exit 1 if any.
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));
use File::Basename qw(dirname);
use lib dirname(__FILE__);
use Prose qw(each_prose_line);

my $found = 0;
sub is_punct { my $c = shift; return defined $c && $c =~ /[\p{P}\p{S}]/; }
sub is_space { my $c = shift; return !defined $c || $c =~ /\s/; }

for my $page (@ARGV) {
    each_prose_line($page, sub {
        my ($line, $n) = @_;
        chomp $line;
        $line =~ s/`[^`]*`/x/g;
        my $open = 0;
        while ($line =~ /(?<!\*)\*\*(?!\*)/g) {
            my $at = pos($line) - 2;
            my $before = $at > 0 ? substr($line, $at - 1, 1) : undef;
            my $after = pos($line) < length($line) ? substr($line, pos($line), 1) : undef;
            my $left = !is_space($after)
                && (!is_punct($after) || is_space($before) || is_punct($before));
            my $right = !is_space($before)
                && (!is_punct($before) || is_space($after) || is_punct($after));
            if (!$open && !$left && $right) {
                next;       # a stray closer: not ours to pair
            }
            my $ok = $open ? $right : $left;
            unless ($ok) {
                my $ctx = substr($line, $at > 12 ? $at - 12 : 0, 28);
                print "$page:$n: '**' at '$ctx' does not ", ($open ? 'close' : 'open'),
                    " bold in CommonMark (put the punctuation outside the **, or a space after it)\n";
                $found++;
            }
            $open = !$open;
        }
    });
}
exit($found ? 1 : 0);
