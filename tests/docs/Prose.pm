# Prose.pm -- what the page checks share: a page's lines outside its
# fenced code blocks, where the prose (and its code spans) is.
package Prose;
use strict;
use warnings;
use Exporter 'import';
our @EXPORT_OK = ('each_prose_line');

# each_prose_line(PAGE, CODE): CODE->(LINE, NUMBER) for each line of PAGE
# that is not inside a fenced code block (nor a fence itself).
sub each_prose_line {
    my ($page, $code) = @_;
    open my $f, '<:encoding(UTF-8)', $page or die "$page: $!\n";
    my $fence = 0;
    while (my $line = <$f>) {
        if ($line =~ /^\s*```/) { $fence = !$fence; next; }
        $code->($line, $.) unless $fence;
    }
    close $f;
}

1;
