#!/usr/bin/perl
# terms.pl -- the Chinese pages, and the program's Chinese strings, keep to
# the glossary's words.
#   usage: terms.pl GLOSSARY FILE...
# A FILE ending in .md is a page; any other (.c, .h, .sh) is the program,
# whose strings a Chinese screen shows: only its double-quoted strings are
# read there (comments may name a variant to say why it is not used).
# GLOSSARY's "Terms to use" table gives, per concept, the course's term,
# the variants that are not used, and an industry word that may stand in
# parentheses right after the course's term ("值守线程（业界常叫看门狗线程）").
# Prose only: code blocks and code spans quote programs and screens, which
# keep their own words. One line per finding, "PAGE:LINE: ..."; exit 1 if
# any.
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));
use File::Basename qw(dirname);
use lib dirname(__FILE__);
use Prose qw(each_prose_line);

my ($glossary, @pages) = @ARGV;
die "usage: terms.pl GLOSSARY FILE...\n" unless $glossary && @pages;

# Compounds that hold a variant but name another concept: a signal
# handler is 信号处理函数 in every Chinese text on Unix.
my @allowed = ('信号处理函数');

my (@rules, $in_table);
open my $g, '<', $glossary or die "$glossary: $!\n";
while (<$g>) {
    $in_table = 1 if /^## Terms to use/;
    next unless $in_table && /^\|/;
    my @cell = map { s/^\s+|\s+$//gr } split /\|/, $_;
    shift @cell;
    next if $cell[0] eq '用这个' || $cell[0] =~ /^-+$/;
    push @rules, { term => $cell[0],
                   avoid => [grep { length } split /、/, $cell[1] // ''],
                   industry => [grep { length } split /、/, $cell[2] // ''] };
}
close $g;
die "$glossary: no 'Terms to use' table\n" unless @rules;

# each_string_line(FILE, CODE): CODE->(STRINGS, NUMBER) for each line of a
# program's source, STRINGS its double-quoted strings joined by spaces.
sub each_string_line {
    my ($file, $code) = @_;
    open my $f, '<:encoding(UTF-8)', $file or die "$file: $!\n";
    while (my $line = <$f>) {
        my @strings = $line =~ /"((?:[^"\\]|\\.)*)"/g;
        $code->(join(' ', @strings), $.) if @strings;
    }
    close $f;
}

my $found = 0;
for my $page (@pages) {
    my $each = $page =~ /\.md$/ ? \&each_prose_line : \&each_string_line;
    $each->($page, sub {
        my ($line, $n) = @_;
        $line =~ s/`[^`]*`//g;
        $line =~ s/\Q$_\E//g for @allowed;
        for my $r (@rules) {
            # The industry word's one permitted place: in the parentheses
            # that follow the course's term.
            for my $w (@{$r->{industry}}) {
                $line =~ s/\Q$r->{term}\E（[^）]*\Q$w\E[^）]*）/$r->{term}/g;
            }
            for my $w (@{$r->{avoid}}, @{$r->{industry}}) {
                next unless index($line, $w) >= 0;
                print "$page:$n: '$w': the glossary's term is '$r->{term}'\n";
                $found++;
            }
        }
    });
}
exit($found ? 1 : 0);
