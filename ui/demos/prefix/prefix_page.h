// PrefixSharingDemoPage: N parallel samples of one prompt in the real KvCacheManager. The
// prompt's blocks are written once and shared (refcount N); the first write into a shared,
// partly filled tail copies it (copy-on-write). Controls choose the prompt length, N, the
// tokens each sample generates and the block size; Step / Play / Run advance the scenario
// (PrefixSharingScenario) one token per sample at a time. The figures (blocks in use, the
// same samples as N separate copies, shared blocks, copies, memory saved) are the two
// managers' own CacheSnapshot numbers.
#pragma once

#include <QWidget>

#include <memory>

class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;

namespace kvscope {
class PrefixSharingScenario;
}  // namespace kvscope

namespace kvscope::ui {

class PrefixBlockView;

class PrefixSharingDemoPage : public QWidget {
  Q_OBJECT

 public:
  explicit PrefixSharingDemoPage(QWidget* parent = nullptr);
  ~PrefixSharingDemoPage() override;

  const PrefixSharingScenario& scenario() const { return *scenario_; }
  PrefixBlockView* blockView() const { return view_; }
  bool isPlaying() const;

 public slots:
  void step();
  void runToEnd();
  void reset();
  void setPlaying(bool playing);

 private:
  QWidget* build_controls();
  QWidget* build_figures();
  void refresh();

  std::unique_ptr<PrefixSharingScenario> scenario_;
  QSpinBox* prompt_;
  QSpinBox* samples_;
  QSpinBox* generated_;
  QSpinBox* block_size_;
  QPushButton* step_;
  QPushButton* play_;
  QPushButton* run_;
  QTimer* timer_;
  PrefixBlockView* view_;
  QLabel* shape_;
  QLabel* progress_;
  QLabel* tokens_;
  QLabel* used_;
  QLabel* separate_;
  QLabel* shared_;
  QLabel* copies_;
  QLabel* saved_;
  QLabel* event_;
};

}  // namespace kvscope::ui
