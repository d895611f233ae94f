package io.github.agentd.client;

import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/** Every item of a list call, page after page (AIP-158 paging), fetched as the loop goes. */
final class Pages {
  private Pages() {}

  /** One page: its items, and the next page's token ("" on the last). */
  record Page<T>(List<T> items, String next) {}

  static <T> Iterable<T> of(ListOptions first, Function<ListOptions, Page<T>> fetch) {
    return () -> new Iterator<T>() {
      private Iterator<T> items = Collections.emptyIterator();
      private String token = first.pageToken;
      private boolean more = true;

      @Override
      public boolean hasNext() {
        while (!items.hasNext() && more) {
          Page<T> page = fetch.apply(first.withPageToken(token));
          items = page.items().iterator();
          token = page.next();
          more = !token.isEmpty();
        }
        return items.hasNext();
      }

      @Override
      public T next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return items.next();
      }
    };
  }
}
