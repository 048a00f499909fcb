#!/usr/bin/perl
# screen.pl -- the Chinese pages name the Chinese screen's words.
#   usage: screen.pl MSG.C PAGE...
# MSG.C is viz/msg.c: each entry pairs the English screen's text with
# the Chinese. A Chinese page that quotes the English screen ("BLOCKED",
# `grow`, "threads 66:") sends a class to look for words their screen
# does not show. Flagged: a capital word of an English entry that its
# Chinese twin does not keep (CPU and IO stay), and an event's English
# name quoted alone in a code span. A line that says it quotes the
# English screen (英文, or beside 中文界面) may; code blocks are left out. One line per finding; exit 1 if any.
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));
use File::Basename qw(dirname);
use lib dirname(__FILE__);
use Prose qw(each_prose_line);

my ($msgc, @pages) = @ARGV;
die "usage: screen.pl MSG.C PAGE...\n" unless $msgc && @pages;

open my $m, '<', $msgc or die "$msgc: $!\n";
my $src = do { local $/; <$m> };
close $m;
my (%caps, %events);
# Event names that are also the names of calls and concepts (`close`,
# `accept`), and capital words that name a concept, not a screen (RSS).
my %apis = map { $_ => 1 } qw(accept close exit error timer run);
my %concepts = map { $_ => 1 } qw(RSS);
while ($src =~ /\[(M_\w+)\]\s*=\s*\{\s*((?:"(?:[^"\\]|\\.)*"\s*)+),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}/g) {
    my ($id, $en, $zh) = ($1, $2, $3);
    for ($en, $zh) { s/"\s*"//g; s/^\s*"|"\s*$//g; }
    if ($id =~ /^M_EV_/) {
        $events{$en} = $zh unless $apis{$en};
        next;
    }
    for my $w ($en =~ /\b([A-Z][A-Z]{2,})\b/g) {
        $caps{$w} = 1 unless index($zh, $w) >= 0 || $concepts{$w};
    }
}
die "$msgc: no screen words found\n" unless %caps && %events;
my $caps_re = join '|', sort keys %caps;

my $found = 0;
# Code blocks hold commands and the code's own names (PHASE_TASKS).
for my $page (@pages) {
    each_prose_line($page, sub {
        my ($line, $n) = @_;
        return if $line =~ /英文|中文界面/;
        my @hits;
        push @hits, "'$1'" while $line =~ /(?<![\w.\/-])($caps_re)(?![\w\/-])/g;
        push @hits, "'threads N:' (线程 N：)" if $line =~ /\bthreads (?:\d+|N):/;
        for my $span ($line =~ /`([^`]+)`/g) {
            push @hits, "`$span` ($events{$span})" if exists $events{$span};
        }
        return unless @hits;
        print "$page:$n: the English screen's ", join(', ', @hits), "\n";
        $found++;
    });
}
exit($found ? 1 : 0);
