#!/usr/bin/perl
# diary.pl -- a page is a reference, in the present tense: what is, and
# how to use it. History goes to the git log (or docs/notes.md).
#   usage: diary.pl PAGE...
# Flags, in prose (code blocks and spans aside), the phrases a lab
# notebook writes: what the code "used to" do ("is used to" is passive,
# and passes), dated runs (2026-11-30), numbered passes ("this pass",
# "fifth pass"), and before-and-after figures ("; now 0.00 s", "1.2 s
# now", "before -> now", "(before issue 16"); in Chinese, 以前是/以前会 and
# 现在已经. One line per finding, "PAGE:LINE: 'PHRASE': ..."; exit 1 if any.
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));
use File::Basename qw(dirname);
use lib dirname(__FILE__);
use Prose qw(each_prose_line);

my @diary = (
    qr/(?<!is )(?<!are )(?<!be )(?<!been )(?<!was )(?<!were )(?<!get )(?<!gets )\bused to\b/,
    qr/\b20\d\d-\d\d-\d\d\b/,
    qr/\b(?:this|first|second|third|fourth|fifth|sixth|last) pass\b/i,
    qr/[;,] now\b/,
    qr/\b\d[\d.]* ?\w* now\b/,
    qr/\bbefore -> now\b/,
    qr/\(before (?:issue|the fix)\b/,
    qr/以前(?:是|会)|现在已经/,
);

my $found = 0;
for my $page (@ARGV) {
    each_prose_line($page, sub {
        my ($line, $n) = @_;
        $line =~ s/`[^`]*`//g;
        for my $re (@diary) {
            next unless $line =~ $re;
            print "$page:$n: '$&': say what is (history belongs in the git log or docs/notes.md)\n";
            $found++;
        }
    });
}
exit($found ? 1 : 0);
